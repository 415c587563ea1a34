/**
 * A batch file as text, chunk by chunk, for every reader (CSV here, pain.001 in
 * iso20022/): hashed, counted against the size limit, checked as strict UTF-8
 * without NUL bytes, lines counted for the errors that name one.
 */
import type { createHash } from 'node:crypto';
import { binaryError, countLines, firstInvalidUtf8, notUtf8Error, sniffStart } from './encoding.js';
import { fileChunks } from './file-chunks.js';
import { tooLarge } from './file-size.js';
import type { ReaderOptions } from './opened-batch.js';

export interface ByteState {
  hash: ReturnType<typeof createHash>;
  bytes: number;
  lines: number;
}

/** Leading bytes that continue a UTF-8 sequence begun in the previous chunk. */
function continuationPrefix(chunk: Buffer): number {
  let n = 0;
  while (n < 3 && n < chunk.length && ((chunk[n] as number) & 0xc0) === 0x80) n += 1;
  return n;
}

const newlinesBefore = (chunk: Buffer, end: number): number => {
  let count = 0;
  for (let i = 0; i < end; i++) if (chunk[i] === 0x0a) count += 1;
  return count;
};

/** The file as text, chunk by chunk: hashed, counted against the size limit, checked as UTF-8 without NUL bytes. */
export async function* textChunks(path: string, options: ReaderOptions, state: ByteState): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let first = true;
  let last: Buffer = Buffer.alloc(0);
  // `last` is the last piece read, still as it was when the file ends (see fileChunks).
  for await (const chunk of fileChunks(path)) {
    state.bytes += chunk.length;
    if (state.bytes > options.maxFileBytes) throw tooLarge(state.bytes, options.maxFileBytes);
    state.hash.update(chunk);
    if (first) sniffStart(chunk);
    first = false;
    const nul = chunk.indexOf(0);
    if (nul !== -1) throw binaryError(state.lines + newlinesBefore(chunk, nul));
    let text: string;
    try {
      text = decoder.decode(chunk, { stream: true });
    } catch {
      const offset = firstInvalidUtf8(chunk, continuationPrefix(chunk));
      throw notUtf8Error(state.lines + newlinesBefore(chunk, offset < 0 ? chunk.length : offset), chunk);
    }
    state.lines += countLines(text);
    last = chunk;
    yield text;
  }
  try {
    const rest = decoder.decode();
    if (rest) yield rest;
  } catch {
    throw notUtf8Error(state.lines, last);
  }
}
