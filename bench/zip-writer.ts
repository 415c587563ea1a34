/**
 * A zip archive written by hand, each part deflated: for the large .xlsx the
 * benchmarks and tests generate (generate-xlsx.ts), and for the test's attacks
 * on the reader (test/helpers/xlsx-bomb.ts), which need what no zip library
 * writes: a run of one byte inflating to a gigabyte without being held whole,
 * a declared size that lies, a part left out of the directory. The run: the
 * deflate output of one mebibyte of a byte that follows the same byte is the
 * same each time (a sync flush ends it on a byte boundary), so it is made
 * three times and then repeated.
 */
import { writeFileSync } from 'node:fs';
import zlib from 'node:zlib';

const MIB = 1024 * 1024;

/** A part's text, with an optional run of `byte` (`length` bytes) inserted at `at` (a character index of the text). */
export interface PartInput {
  name: string;
  text: string;
  fill?: { at: number; byte: number; length: number };
  /** The unpacked size the archive declares for the part, in place of its real one: a lie. */
  declaredSize?: number;
  /** Stored, but left out of the archive's directory. */
  unlisted?: boolean;
}

interface Packed {
  name: string;
  data: Buffer[];
  crc: number;
  compressedSize: number;
  uncompressedSize: number;
}

function flushed(deflate: zlib.DeflateRaw, chunk: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    const onData = (data: Buffer): void => void out.push(data);
    deflate.on('data', onData);
    deflate.once('error', reject);
    deflate.write(chunk);
    deflate.flush(zlib.constants.Z_SYNC_FLUSH, () => {
      deflate.off('data', onData);
      resolve(Buffer.concat(out));
    });
  });
}

function finished(deflate: zlib.DeflateRaw, chunk: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    deflate.on('data', (data: Buffer) => void out.push(data));
    deflate.once('error', reject);
    deflate.once('end', () => resolve(Buffer.concat(out)));
    deflate.end(chunk);
  });
}

async function pack(part: PartInput, level: number): Promise<Packed> {
  const fill = part.fill ?? { at: part.text.length, byte: 0x20, length: 0 };
  const head = Buffer.from(part.text.slice(0, fill.at), 'utf8');
  const tail = Buffer.from(part.text.slice(fill.at), 'utf8');
  const deflate = zlib.createDeflateRaw({ level });
  const data: Buffer[] = [];
  let crc = zlib.crc32(head);
  data.push(await flushed(deflate, head));
  const whole = Math.floor(fill.length / MIB);
  const mebibyte = Buffer.alloc(MIB, fill.byte);
  let repeated: Buffer | null = null;
  for (let i = 0; i < whole; i++) {
    crc = zlib.crc32(mebibyte, crc);
    if (repeated) {
      data.push(repeated);
      continue;
    }
    const packed = await flushed(deflate, mebibyte);
    // From the third mebibyte on the window holds nothing but the byte: the output repeats.
    if (i >= 2 && packed.equals(data[data.length - 1] as Buffer)) repeated = packed;
    data.push(packed);
  }
  const rest = Buffer.alloc(fill.length - whole * MIB, fill.byte);
  crc = zlib.crc32(tail, zlib.crc32(rest, crc));
  data.push(await finished(deflate, Buffer.concat([rest, tail])));
  const compressedSize = data.reduce((sum, b) => sum + b.length, 0);
  return { name: part.name, data, crc, compressedSize, uncompressedSize: part.declaredSize ?? head.length + fill.length + tail.length };
}

function localHeader(part: Packed, name: Buffer): Buffer {
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(20, 4);
  header.writeUInt16LE(0x0800, 6); // UTF-8 names
  header.writeUInt16LE(8, 8); // deflated
  header.writeUInt32LE(part.crc, 14);
  header.writeUInt32LE(part.compressedSize, 18);
  header.writeUInt32LE(part.uncompressedSize, 22);
  header.writeUInt16LE(name.length, 26);
  return Buffer.concat([header, name]);
}

function directoryEntry(part: Packed, name: Buffer, offset: number): Buffer {
  const entry = Buffer.alloc(46);
  entry.writeUInt32LE(0x02014b50, 0);
  entry.writeUInt16LE(20, 4);
  entry.writeUInt16LE(20, 6);
  entry.writeUInt16LE(0x0800, 8);
  entry.writeUInt16LE(8, 10);
  entry.writeUInt32LE(part.crc, 16);
  entry.writeUInt32LE(part.compressedSize, 20);
  entry.writeUInt32LE(part.uncompressedSize, 24);
  entry.writeUInt16LE(name.length, 28);
  entry.writeUInt32LE(offset, 42);
  return Buffer.concat([entry, name]);
}

/**
 * Writes a zip archive of `parts`, in order, each deflated (`level`: zlib's, 9 by default); sizes declared in each
 * local header and in the directory.
 */
export async function writeZip(file: string, parts: PartInput[], level = 9): Promise<void> {
  const out: Buffer[] = [];
  const directory: Buffer[] = [];
  let offset = 0;
  for (const input of parts) {
    const part = await pack(input, level);
    const name = Buffer.from(part.name, 'utf8');
    const header = localHeader(part, name);
    if (!input.unlisted) directory.push(directoryEntry(part, name, offset));
    out.push(header, ...part.data);
    offset += header.length + part.compressedSize;
  }
  const directoryBytes = Buffer.concat(directory);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(directory.length, 8);
  end.writeUInt16LE(directory.length, 10);
  end.writeUInt32LE(directoryBytes.length, 12);
  end.writeUInt32LE(offset, 16);
  writeFileSync(file, Buffer.concat([...out, directoryBytes, end]));
}

