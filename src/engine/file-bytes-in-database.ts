/**
 * A taken file's bytes, kept in the shared database (several workers on
 * PostgreSQL): any worker can then carry its batch, take it in again after its
 * taker died, and archive it, whichever machine's disk it arrived on.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readFile } from 'node:fs/promises';
import { parseManifest } from '../batch/manifest.js';
import { openSafely, writeFileSafely } from '../workspace/safe-files.js';
import type { SharedWorkStore } from '../store/port.js';

const CHUNK_BYTES = 1024 * 1024;
/** A manifest holds a few figures; one larger than this is not kept (the file's check still reads it). */
const MANIFEST_MAX_BYTES = 64 * 1024;

/** Keeps the file's bytes for the batch, a MiB at a time; returns the SHA-256 of the bytes kept. */
export async function keepFileBytes(store: SharedWorkStore, batchId: string, path: string): Promise<string> {
  const hash = createHash('sha256');
  let seq = 0;
  let pending: Buffer[] = [];
  let size = 0;
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    const chunk = Buffer.concat(pending);
    pending = [];
    size = 0;
    await store.addFileChunk(batchId, seq, chunk);
    seq += 1;
  };
  for await (const piece of createReadStream(path, { highWaterMark: 256 * 1024 }) as AsyncIterable<Buffer>) {
    hash.update(piece);
    pending.push(piece);
    size += piece.length;
    if (size >= CHUNK_BYTES) await flush();
  }
  await flush();
  return hash.digest('hex');
}

/**
 * Writes the kept bytes of a batch's file to `target`, only if they are the
 * whole file (their SHA-256 is `sha256`): nothing is at `target` otherwise, nor
 * until all of it is. Its manifest, when one was kept, goes beside it
 * (`target.manifest.json`), as a file's companions travel with it. False when
 * the bytes kept are not the file.
 */
export async function restoreKeptFile(store: SharedWorkStore, batchId: string, sha256: string, home: string, target: string): Promise<boolean> {
  const hash = createHash('sha256');
  const file = await openSafely(home, target);
  try {
    for await (const chunk of store.fileChunks(batchId)) {
      hash.update(chunk);
      if (!file.stream.write(chunk)) await new Promise<void>((resolve) => file.stream.once('drain', () => resolve()));
    }
  } catch (error) {
    await file.abandon();
    throw error;
  }
  if (hash.digest('hex') !== sha256) {
    await file.abandon();
    return false;
  }
  await file.commit();
  const manifest = await store.keptManifest(batchId);
  if (manifest !== null) await writeFileSafely(home, `${target}.manifest.json`, manifest);
  return true;
}

/**
 * Keeps the manifest that came with the file (`path`, when there is one): a
 * file taken again on another machine needs it where a manifest is required,
 * and would otherwise wait for it in the inbox.
 */
export async function keepManifest(store: SharedWorkStore, batchId: string, path: string): Promise<void> {
  const entry = await lstat(path).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? null : Promise.reject(error)));
  if (!entry?.isFile() || entry.size > MANIFEST_MAX_BYTES) return;
  const text = await readFile(path, 'utf8');
  // Only a manifest that reads as one: the file's own check refuses it otherwise, and must be the one to say so
  // (PostgreSQL's text refuses a NUL, which failed the whole intake with a database error, the file left claimed).
  if ('manifest' in parseManifest(text)) await store.keepManifest(batchId, text);
}
