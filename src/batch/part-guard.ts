/**
 * Counts and checks what each part of a workbook inflates to, as it is
 * inflated, before exceljs sees a byte of it. exceljs unzips with unzipper's
 * Parse stream, which hands each part over as a stream of its inflated bytes
 * (an "entry") and then writes into it: each entry is caught as it is handed
 * over, and its writes pass through here. Past what the archive's directory
 * declared for the part (part-limits.ts), or past a bound on its XML
 * (xml-bounds.ts), the part is cut where it is and the archive stopped: exceljs
 * then fails on a cut archive, and the reader reports the refusal kept here
 * instead. Memory and temporary files thus never hold more than was allowed.
 */
import { WriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { BatchFileError } from './file-error.js';
import type { InflateBudget } from './part-limits.js';
import { partKind } from './part-limits.js';
import { MarkupBounds } from './xml-bounds.js';

/** What is used of unzipper's entries: a PassThrough with the part's name, its inflater piped into it. */
interface Entry {
  path: string;
  write(chunk: Buffer, ...rest: unknown[]): boolean;
  end(...args: unknown[]): unknown;
  on(event: 'pipe', listener: (source: Readable) => void): unknown;
  pipe<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T;
}

const isEntry = (chunk: unknown): chunk is Entry =>
  chunk !== null && typeof chunk === 'object' && typeof (chunk as Entry).path === 'string' && typeof (chunk as Entry).write === 'function';

/** The XML bounds of the parts exceljs parses; null for the parts it passes over (only counted). */
function boundsFor(name: string): MarkupBounds | null {
  switch (partKind(name)) {
    case 'sheet': return new MarkupBounds({ depth: 3, name: 'row' });
    case 'shared_strings': return new MarkupBounds({ depth: 2, name: 'shared string' });
    case 'model': return new MarkupBounds(null);
    default: return null;
  }
}

/** Writes after a refusal are dropped; a callback given with one is still called. */
function dropped(rest: unknown[]): boolean {
  const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
  if (callback) process.nextTick(callback);
  return true;
}

/** What the guard reports: the refusal, and each temporary file exceljs sets a sheet aside in. */
export interface GuardEvents {
  refuse(error: BatchFileError): void;
  spooled(path: string): void;
}

function watch(entry: Entry, budget: InflateBudget, events: GuardEvents): void {
  const name = entry.path;
  const pipe = entry.pipe.bind(entry);
  entry.pipe = <T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T => {
    if (destination instanceof WriteStream && typeof destination.path === 'string') events.spooled(destination.path);
    return pipe(destination, options);
  };
  const write = entry.write.bind(entry);
  const end = entry.end.bind(entry);
  const allowance = budget.allowance(name);
  const bounds = boundsFor(name);
  let inflated = 0;
  let stopped: BatchFileError | null = null;
  let inflater: Readable | null = null;
  /**
   * The inflater is destroyed: unzipper then fails the archive with its
   * error, and nothing more is inflated. Left to run unread, it would wait
   * forever, and so would the archive behind it.
   */
  const stopInflating = (): void => {
    if (!inflater || !stopped) return;
    inflater.unpipe();
    inflater.destroy(stopped);
  };
  entry.on('pipe', (source) => {
    inflater = source;
    stopInflating();
  });
  const stop = (error: BatchFileError): void => {
    stopped = error;
    events.refuse(error);
    end(); // what reads the part (exceljs, or a temporary file) sees it end, then the archive's failure
    stopInflating();
  };
  entry.write = (chunk: Buffer, ...rest: unknown[]): boolean => {
    if (stopped || typeof allowance !== 'number') return dropped(rest);
    inflated += chunk.length;
    let problem = budget.spend(name, chunk.length, inflated, allowance);
    if (!problem && bounds) {
      const markup = bounds.scan(chunk);
      if (markup) problem = new BatchFileError(markup.code, null, `${name} ${markup.message}`);
    }
    if (!problem) return write(chunk, ...rest);
    stop(problem);
    return dropped(rest);
  };
  entry.end = (...args: unknown[]): unknown => (stopped ? entry : end(...args));
  if (typeof allowance !== 'number') stop(allowance);
}

/** Watches every part `zip` (unzipper's Parse stream, as exceljs pipes the file into it) hands over. */
export function guardParts(zip: NodeJS.WritableStream, budget: InflateBudget, events: GuardEvents): void {
  const parse = zip as unknown as Readable;
  if (typeof parse.push !== 'function') return;
  const push = parse.push.bind(parse);
  parse.push = (chunk: unknown, encoding?: BufferEncoding): boolean => {
    if (isEntry(chunk)) watch(chunk, budget, events);
    return push(chunk, encoding);
  };
}
