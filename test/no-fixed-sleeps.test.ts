/**
 * Outside the system tier a test moves a manual clock or waits for an event with
 * a bound: it never sleeps for a fixed 200 ms or more, which a busy machine turns
 * into a failure and a quiet one into wasted time (docs/testing.md, "Time in
 * tests"). A sleep here is a promise a timer resolves (`setTimeout(resolve, N)`),
 * or `sleep(N)` / `delay(N)`; a timer that rejects, the bound on a wait, is not
 * one. N is a number written in the call or a constant of the same file; a
 * length computed at run time is not read.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SYSTEM } from './tiers.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LONGEST_ALLOWED = 200;

/** A vitest include pattern (`*` within a folder, `**` across folders) as a regular expression. */
function globPattern(glob: string): RegExp {
  const body = glob.split(/(\*\*\/|\*)/).map((part) => (part === '**/' ? '(?:.*/)?' : part === '*' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))).join('');
  return new RegExp(`^${body}$`);
}

function testFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.ts') ? [relative(ROOT, path).split('\\').join('/')] : [];
  });
}

const SLEEPS = [
  /setTimeout\(\s*(?:resolve|res|r|done|ok|wake)\s*,\s*([A-Za-z_$][\w$]*|[\d_]+)\s*\)/g,
  /(?<![\w$.])(?:sleep|delay)\(\s*([A-Za-z_$][\w$]*|[\d_]+)\s*[,)]/g,
];

/** Each fixed sleep of LONGEST_ALLOWED or more in a file's text: `line: text`. */
export function fixedSleeps(text: string): string[] {
  const constants = new Map<string, number>();
  for (const [, name, value] of text.matchAll(/\bconst\s+([A-Za-z_$][\w$]*)\s*=\s*([\d_]+)\s*;/g)) constants.set(name as string, Number((value as string).replace(/_/g, '')));
  const found: string[] = [];
  text.split('\n').forEach((line, index) => {
    for (const pattern of SLEEPS) {
      for (const [, length] of line.matchAll(pattern)) {
        const ms = /^[\d_]+$/.test(length as string) ? Number((length as string).replace(/_/g, '')) : constants.get(length as string);
        if (ms !== undefined && ms >= LONGEST_ALLOWED) found.push(`${index + 1}: ${line.trim()}`);
      }
    }
  });
  return found;
}

describe('fixed sleeps in tests', () => {
  it('are found: literal and constant lengths, setTimeout resolving, sleep and delay; not a bound that rejects, nor a short one', () => {
    // The lengths are put in as values, so that this file's own text holds no fixed sleep for a search to find.
    const [stall, long, short, shorter] = [600, '1_500', 250, 200];
    const text = [
      `const STALL_MS = ${stall};`,
      `await new Promise((r) => setTimeout(r, ${long}));`,
      'await new Promise((resolve) => setTimeout(resolve, STALL_MS));',
      `await sleep(${short});`,
      `await delay(${shorter});`,
      'const timer = setTimeout(() => reject(new Error("late")), 30_000);',
      'await new Promise((r) => setTimeout(r, 150));',
      'liar.lie(rule("POST", path, delay(100)));',
    ].join('\n');
    expect(fixedSleeps(text)).toEqual([
      `2: await new Promise((r) => setTimeout(r, ${long}));`,
      '3: await new Promise((resolve) => setTimeout(resolve, STALL_MS));',
      `4: await sleep(${short});`,
      `5: await delay(${shorter});`,
    ]);
  });

  it('none of 200 ms or more outside the system tier', () => {
    const system = SYSTEM.map(globPattern);
    const outside = testFiles(join(ROOT, 'test')).filter((file) => !system.some((pattern) => pattern.test(file)) && file !== 'test/no-fixed-sleeps.test.ts');
    expect(outside.length).toBeGreaterThan(50);
    const sleeps = outside.flatMap((file) => fixedSleeps(readFileSync(join(ROOT, file), 'utf8')).map((line) => `${file}:${line}`));
    expect(sleeps).toEqual([]);
  });

  it('the system tier is read as vitest reads it: its patterns match the files it runs', () => {
    const files = testFiles(join(ROOT, 'test'));
    expect(files).toContain('test/cli/run-command.test.ts');
    expect(files.filter((file) => globPattern('test/cli/**/*.test.ts').test(file))).toContain('test/cli/run-command.test.ts');
    expect(globPattern('test/store/checkpointer*.test.ts').test('test/store/checkpointer-under-run-and-watch.test.ts')).toBe(true);
    expect(globPattern('test/store/checkpointer*.test.ts').test('test/store/sqlite-store.test.ts')).toBe(false);
  });
});
