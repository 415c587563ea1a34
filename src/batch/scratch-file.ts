/**
 * A scratch file for the fingerprints of a batch's rows (see
 * fingerprint-spill.ts): made on the first put only, and removed from its
 * folder as soon as it is open,
 * so nothing is left behind by a crash; the space is given back when it is
 * closed, or when the process ends. It holds hashes, never a field as written.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DiskError } from '../errors.js';
import type { Spill } from '../validate/key-partitions.js';

/** Reads `length` bytes at `position` of an open file into `into` from `offset`, as fs.readSync does; a test's double fails as a disk can. */
export type ReadAt = (fd: number, into: Uint8Array, offset: number, length: number, position: number) => number;

export class ScratchFile implements Spill {
  private fd: number | null = null;
  private size = 0;

  constructor(
    private readonly folder: string = tmpdir(),
    private readonly readAt: ReadAt = readSync,
  ) {}

  put(words: Uint32Array): number {
    const at = this.size;
    const bytes = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
    if (this.fd === null) {
      try {
        this.fd = openUnlinked(this.folder);
      } catch (error) {
        throw this.refused('make', error);
      }
    }
    try {
      for (let done = 0; done < bytes.length; ) done += writeSync(this.fd, bytes, done, bytes.length - done, at + done);
    } catch (error) {
      throw this.refused('write', error);
    }
    this.size += bytes.length;
    return at;
  }

  get(at: number, into: Uint32Array): void {
    if (this.fd === null) throw new Error('nothing was put in this scratch file');
    const bytes = new Uint8Array(into.buffer, into.byteOffset, into.byteLength);
    for (let done = 0; done < bytes.length; ) {
      let read: number;
      try {
        read = this.readAt(this.fd, bytes, done, bytes.length - done, at + done);
      } catch (error) {
        throw this.refused('read', error);
      }
      if (read === 0) throw new Error(`the scratch file ended at ${at + done} bytes, before what was put there`);
      done += read;
    }
  }

  /** The operating system's refusal as one line that says what to do (exit 74), not as a bug. */
  private refused(what: 'make' | 'write' | 'read', error: unknown): DiskError {
    const reason = (error as Error).message;
    return new DiskError(`cannot ${what} the scratch file for the rules across rows in ${this.folder} (the temporary folder; TMPDIR sets another): ${reason}`, { cause: error });
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    this.size = 0;
  }
}

function openUnlinked(folder: string): number {
  const path = join(folder, `.paybatch-scratch-${process.pid}-${randomBytes(6).toString('hex')}`);
  // wx: never an existing file (nor one a link points to); owner only.
  const fd = openSync(path, 'wx+', 0o600);
  try {
    unlinkSync(path);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}
