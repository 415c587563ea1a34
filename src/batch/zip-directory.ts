/**
 * The directory at the end of a zip archive (an .xlsx file is one): each
 * part's name with its compressed and uncompressed sizes, as the archive
 * declares them. Read before a byte is inflated, so that a workbook declaring
 * parts far larger than it weighs is refused at once; what the parts really
 * inflate to is counted as they are read (part-guard.ts), since a declaration
 * can lie.
 */
import { open } from 'node:fs/promises';
import { BatchFileError } from './file-error.js';

export interface ZipPart {
  name: string;
  compressedSize: number;
  uncompressedSize: number;
}

const END = 0x06054b50;
const END64 = 0x06064b50;
const END64_LOCATOR = 0x07064b50;
const ENTRY = 0x02014b50;
/** The end record (22 bytes) and the longest comment it may carry. */
const TAIL_BYTES = 22 + 0xffff;
/** About a hundred bytes a part: far more parts than any workbook has, and a bound on what is held to read them. */
export const MAX_DIRECTORY_BYTES = 16 * 1024 * 1024;

const damaged = (why: string): BatchFileError =>
  new BatchFileError('not_a_workbook', null, `the file cannot be read as an .xlsx workbook: ${why}`);

async function readAt(path: string, position: number, length: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, position);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** Where the directory is and how many parts it lists, from the end record (or its zip64 form). */
export function findDirectory(tail: Buffer): { at: number; size: number; count: number } | { zip64At: number } {
  let end = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === END) {
      end = i;
      break;
    }
  }
  if (end < 0) throw damaged('the archive has no end record (cut short, still being written, or damaged)');
  const count = tail.readUInt16LE(end + 10);
  const size = tail.readUInt32LE(end + 12);
  const at = tail.readUInt32LE(end + 16);
  if (count !== 0xffff && size !== 0xffffffff && at !== 0xffffffff) return { at, size, count };
  const locator = end - 20;
  if (locator < 0 || tail.readUInt32LE(locator) !== END64_LOCATOR) throw damaged('its zip64 end record is missing');
  return { zip64At: Number(tail.readBigUInt64LE(locator + 8)) };
}

/** A size the entry gives as 0xFFFFFFFF is in its zip64 extra field, in a fixed order: uncompressed, then compressed. */
function zip64Sizes(extra: Buffer, uncompressed: number, compressed: number): { uncompressed: number; compressed: number } {
  for (let i = 0; i + 4 <= extra.length; ) {
    const id = extra.readUInt16LE(i);
    const length = extra.readUInt16LE(i + 2);
    if (id === 0x0001) {
      let at = i + 4;
      const next = (): number => {
        if (at + 8 > i + 4 + length || at + 8 > extra.length) throw damaged('a zip64 field is shorter than its sizes');
        const value = Number(extra.readBigUInt64LE(at));
        at += 8;
        return value;
      };
      const u = uncompressed === 0xffffffff ? next() : uncompressed;
      const c = compressed === 0xffffffff ? next() : compressed;
      return { uncompressed: u, compressed: c };
    }
    i += 4 + length;
  }
  return { uncompressed, compressed };
}

/** The parts a directory lists, with their sizes. Pure. */
export function parseDirectory(directory: Buffer, count: number): ZipPart[] {
  const parts: ZipPart[] = [];
  let at = 0;
  for (let n = 0; n < count; n++) {
    if (at + 46 > directory.length || directory.readUInt32LE(at) !== ENTRY) throw damaged(`its directory is damaged at part ${n + 1} of ${count}`);
    const nameLength = directory.readUInt16LE(at + 28);
    const extraLength = directory.readUInt16LE(at + 30);
    const commentLength = directory.readUInt16LE(at + 32);
    const next = at + 46 + nameLength + extraLength + commentLength;
    if (next > directory.length) throw damaged(`its directory is damaged at part ${n + 1} of ${count}`);
    const name = directory.toString('utf8', at + 46, at + 46 + nameLength);
    const extra = directory.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength);
    const sizes = zip64Sizes(extra, directory.readUInt32LE(at + 24), directory.readUInt32LE(at + 20));
    parts.push({ name, compressedSize: sizes.compressed, uncompressedSize: sizes.uncompressed });
    at = next;
  }
  return parts;
}

/** The parts of the archive at `path` (`size` bytes), as its directory declares them. */
export async function readZipDirectory(path: string, size: number): Promise<ZipPart[]> {
  const tailStart = Math.max(0, size - TAIL_BYTES);
  const found = findDirectory(await readAt(path, tailStart, size - tailStart));
  let where: { at: number; size: number; count: number };
  if ('zip64At' in found) {
    const end64 = await readAt(path, found.zip64At, 56);
    if (end64.length < 56 || end64.readUInt32LE(0) !== END64) throw damaged('its zip64 end record is missing');
    where = { count: Number(end64.readBigUInt64LE(32)), size: Number(end64.readBigUInt64LE(40)), at: Number(end64.readBigUInt64LE(48)) };
  } else {
    where = found;
  }
  if (where.at + where.size > size) throw damaged('its directory lies past the end of the file (cut short, or damaged)');
  if (where.size > MAX_DIRECTORY_BYTES) throw damaged(`its directory takes ${where.size} bytes, more than the ${MAX_DIRECTORY_BYTES} any workbook needs`);
  return parseDirectory(await readAt(path, where.at, where.size), where.count);
}
