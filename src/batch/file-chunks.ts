/**
 * A file's bytes in pieces, all read into one buffer made once (by halves: one
 * is read into while the other is given out). A read stream
 * makes a new 64 KB buffer for every piece, outside V8's heap; those buffers
 * are freed only when V8 collects the objects holding them, which for a
 * million-row file let some 30 MB of them pile up at once, and the C
 * allocator keeps what it has handed out: `run` stayed 25 MB larger for the
 * rest of the batch.
 *
 * Each piece is valid until the next one is asked for: read it, don't keep it.
 * The last piece stays as it is once the file is read to its end (the read
 * ahead that finds the end reads nothing into the other buffer).
 */
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';

const PIECE_BYTES = 64 * 1024;

/** A read not awaited yet: its failure is thrown where it is awaited, not reported meanwhile as unhandled. */
function readAhead(handle: FileHandle, buffer: Buffer): Promise<{ bytesRead: number }> {
  const reading = handle.read(buffer, 0, PIECE_BYTES, null);
  reading.catch(() => {});
  return reading;
}

export async function* fileChunks(path: string): AsyncGenerator<Buffer> {
  const handle = await open(path, 'r');
  // Two halves: the next piece is read while the one given out is worked on (a pain.001 of 444 MB is 6,800 reads,
  // and the reading thread waited for each, idle).
  const memory = Buffer.allocUnsafeSlow(2 * PIECE_BYTES);
  const buffers = [memory.subarray(0, PIECE_BYTES), memory.subarray(PIECE_BYTES)] as const;
  let next = 0;
  let reading: Promise<{ bytesRead: number }> | null = readAhead(handle, buffers[0]);
  try {
    for (;;) {
      const buffer = buffers[next] as Buffer;
      const { bytesRead } = await (reading as Promise<{ bytesRead: number }>);
      reading = null;
      if (bytesRead === 0) return;
      next = 1 - next;
      reading = readAhead(handle, buffers[next] as Buffer);
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    // A read still under way when the reader stops early ends before the file is closed (its error is of no use).
    if (reading) await reading.catch(() => {});
    await handle.close();
  }
}
