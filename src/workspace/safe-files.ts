/**
 * Nothing paybatch writes goes through a link or leaves the workspace: results,
 * summaries, reports, notes, temporary files and the log are opened without
 * following links, created exclusively under a fresh random name, then renamed
 * into place, in a folder checked to resolve inside the workspace with no link
 * on the way. Files are readable by their owner only (0600): results carry
 * names and amounts.
 */
import { randomUUID } from 'node:crypto';
import { constants, openSync, realpathSync } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { open, realpath, rename, unlink } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { ExitCode, PaybatchError } from '../errors.js';

export const FILE_MODE = 0o600;
const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** A path paybatch would write through is a link, or leads outside the workspace (exit 73). */
export class UnsafePath extends PaybatchError {
  constructor(message: string) {
    super(message, ExitCode.cantCreate);
  }
}

/** `folder` is `home` or inside it, and its real path is the one expected: no component of it is a link. */
export async function checkFolder(home: string, folder: string): Promise<void> {
  const root = await realpath(home);
  const rel = relative(resolve(home), resolve(folder));
  if (rel.startsWith('..') || isAbsolute(rel)) throw new UnsafePath(`${folder} is not inside the workspace ${home}: refused`);
  const real = await realpath(folder).catch(() => null);
  const expected = rel === '' ? root : join(root, rel);
  if (real !== expected) throw new UnsafePath(`${folder} leads through a symbolic link (to ${real ?? 'nowhere'}): refused, paybatch writes nothing through a link`);
}

/** The same check, synchronous, for the log opened at start. */
export function checkFolderSync(home: string, folder: string): void {
  const root = realpathSync(home);
  const rel = relative(resolve(home), resolve(folder));
  let real: string | null = null;
  try {
    real = realpathSync(folder);
  } catch {
    real = null;
  }
  if (rel.startsWith('..') || isAbsolute(rel) || real !== (rel === '' ? root : join(root, rel))) throw new UnsafePath(`${folder} leads through a symbolic link or out of the workspace: refused`);
}

function refusal(path: string, error: NodeJS.ErrnoException): Error {
  if (error.code === 'ELOOP') return new UnsafePath(`${path} is a symbolic link: refused, paybatch writes nothing through a link`);
  if (error.code === 'EEXIST') return new UnsafePath(`${path} already exists where paybatch creates a new file: refused`);
  return error;
}

/** A temporary name beside `path`: hidden, unpredictable, never a name someone could plant a link at in advance. */
const temporaryFor = (path: string): string => join(dirname(path), `.${basename(path)}.${randomUUID()}.tmp`);

/** Writes a whole file atomically (a new temporary file, then a rename over the final name), never through a link. */
export async function writeFileSafely(home: string, path: string, content: string | Buffer): Promise<void> {
  await checkFolder(home, dirname(path));
  const temporary = temporaryFor(path);
  const handle = await open(temporary, CREATE_NEW, FILE_MODE).catch((error: NodeJS.ErrnoException) => Promise.reject(refusal(temporary, error)));
  try {
    await handle.writeFile(content);
  } catch (error) {
    await handle.close();
    await unlink(temporary).catch(() => {});
    throw error;
  }
  await handle.close();
  // rename() replaces whatever is at the final name, a link included, without following it.
  await rename(temporary, path);
}

/** A file written as a stream, then put in place by `commit` (or dropped by `abandon`). */
export interface SafeStream {
  stream: WriteStream;
  commit(): Promise<void>;
  abandon(): Promise<void>;
}

export async function openSafely(home: string, path: string): Promise<SafeStream> {
  await checkFolder(home, dirname(path));
  const temporary = temporaryFor(path);
  const handle = await open(temporary, CREATE_NEW, FILE_MODE).catch((error: NodeJS.ErrnoException) => Promise.reject(refusal(temporary, error)));
  // The handle's own stream, so that the handle is closed once, by the stream (not again when collected).
  const stream = handle.createWriteStream({ autoClose: true });
  const closed = new Promise<void>((resolveClosed) => stream.once('close', () => resolveClosed()));
  return {
    stream,
    async commit() {
      stream.end();
      await closed;
      await rename(temporary, path);
    },
    async abandon() {
      // Ended, not destroyed: a write still under way finishes first (a file stream destroyed under a write fails it
      // with an 'error' event nobody listens to). Whoever piped into the stream unpipes before abandoning it.
      stream.end();
      await closed;
      await unlink(temporary).catch(() => {});
    },
  };
}

/** Moves a file between workspace folders, both checked; a link planted at the destination is replaced, not followed. */
export async function moveSafely(home: string, from: string, to: string): Promise<void> {
  await checkFolder(home, dirname(to));
  await rename(from, to);
}

/** The log, opened for appending: never through a link; created 0600. */
export function openLogSafely(home: string, path: string): number {
  checkFolderSync(home, dirname(path));
  try {
    return openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, FILE_MODE);
  } catch (error) {
    throw refusal(path, error as NodeJS.ErrnoException);
  }
}
