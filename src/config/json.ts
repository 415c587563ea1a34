/** Reading JSON configuration files and explaining what is wrong in them. */
import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { ConfigError } from '../errors.js';

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Objects merge key by key; arrays and scalars replace. */
export function mergeDeep(base: unknown, override: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(override)) return override === undefined ? base : override;
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) merged[key] = mergeDeep(base[key], value);
  return merged;
}

/** Turns schema issues into one message per bad key, e.g. `faults.http_500_rate: ...`. */
export function describeIssues(source: string, error: z.ZodError): string {
  const lines = error.issues.map((issue) => `  ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  return `${source} is not valid:\n${lines.join('\n')}`;
}

export function readJsonFile(file: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read ${what} ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    // Where, never what: the parser's message quotes the text, and a file given here by mistake may hold a secret.
    throw new ConfigError(`${what} ${file} is not valid JSON${jsonErrorPlace(text, (error as Error).message)}; nothing of its content is shown`);
  }
}


/** " (line L, column C)" from the parser's "at position N", or "" when it gives none. */
function jsonErrorPlace(text: string, message: string): string {
  const match = /position (\d+)/.exec(message);
  if (!match) return text.trim() === '' ? ' (it is empty)' : ' (at its start)';
  const before = text.slice(0, Number(match[1]));
  const line = before.split('\n').length;
  return ` (line ${line}, column ${before.length - before.lastIndexOf('\n')})`;
}
