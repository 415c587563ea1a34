/**
 * .xlsx files that attack, zipped here by hand: a small valid workbook (one
 * sheet "Payouts", a header and rows as shared strings) whose shared strings
 * or sheet (stored before the shared strings, as Excel stores it) can be padded with a run of one byte inflating to a gigabyte, and
 * whose archive can lie about a part's unpacked size. The run is never held
 * whole: deflate's output for one mebibyte of a byte that follows the same
 * byte is the same each time (a sync flush ends it on a byte boundary), so it
 * is made three times and then repeated; a gigabyte packs to about a
 * megabyte in a second or two.
 */
import { writeFileSync } from 'node:fs';
import zlib from 'node:zlib';
import { columnLetters } from '../../src/batch/cell-values.js';

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

async function pack(part: PartInput): Promise<Packed> {
  const fill = part.fill ?? { at: part.text.length, byte: 0x20, length: 0 };
  const head = Buffer.from(part.text.slice(0, fill.at), 'utf8');
  const tail = Buffer.from(part.text.slice(fill.at), 'utf8');
  const deflate = zlib.createDeflateRaw({ level: 9 });
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

/** Writes a zip archive of `parts`, in order, each deflated; sizes declared in each local header and in the directory. */
export async function writeZip(file: string, parts: PartInput[]): Promise<void> {
  const out: Buffer[] = [];
  const directory: Buffer[] = [];
  let offset = 0;
  for (const input of parts) {
    const part = await pack(input);
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

const escape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const RELS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const DOC_RELS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

/** Where to pad a workbook, and how. */
export interface Attack {
  /** A run of this many spaces: inside the first shared string, or in the sheet right after <sheetData>. */
  pad?: { part: 'sharedStrings' | 'sheet'; bytes: number };
  /** The unpacked size the archive declares for a part, whatever it unpacks to: a lie. */
  declare?: { part: 'sharedStrings' | 'sheet'; bytes: number };
  /** A part stored in the archive before the sheet but left out of its directory. */
  unlistedPart?: boolean;
  /** Extra text for the first shared string (for a long cell): added to the header's first column name. */
  longText?: string;
}

/** A workbook of one sheet "Payouts": `rows` under their header, every cell a shared string; attacked as said. */
export async function writeAttackWorkbook(file: string, rows: readonly Record<string, string>[], attack: Attack = {}): Promise<void> {
  const header = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const strings: string[] = [];
  const index = new Map<string, number>();
  const ref = (text: string): number => {
    if (!index.has(text)) {
      index.set(text, strings.length);
      strings.push(text);
    }
    return index.get(text) as number;
  };
  const table = [header, ...rows.map((row) => header.map((name) => row[name] ?? ''))];
  const sheetRows = table.map((cells, r) => `<row r="${r + 1}">${cells.map((text, c) => `<c r="${columnLetters(c + 1)}${r + 1}" t="s"><v>${ref(text)}</v></c>`).join('')}</row>`);
  const firstString = `<si><t xml:space="preserve">`;
  const sst = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst xmlns="${MAIN}" count="${strings.length}" uniqueCount="${strings.length}">${strings.map((s, i) => `${firstString}${escape(s)}${i === 0 && attack.longText ? attack.longText : ''}</t></si>`).join('')}</sst>`;
  const sheetHead = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="${MAIN}"><sheetData>`;
  const sheet = `${sheetHead}${sheetRows.join('')}</sheetData></worksheet>`;
  const pad = attack.pad;
  await writeZip(file, [
    { name: '[Content_Types].xml', text: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>` },
    { name: '_rels/.rels', text: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="${RELS}"><Relationship Id="rId1" Type="${DOC_RELS}/officeDocument" Target="xl/workbook.xml"/></Relationships>` },
    { name: 'xl/workbook.xml', text: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<workbook xmlns="${MAIN}" xmlns:r="${DOC_RELS}"><sheets><sheet name="Payouts" sheetId="1" r:id="rId1"/></sheets></workbook>` },
    { name: 'xl/_rels/workbook.xml.rels', text: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="${RELS}"><Relationship Id="rId1" Type="${DOC_RELS}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${DOC_RELS}/sharedStrings" Target="sharedStrings.xml"/></Relationships>` },
    ...(attack.unlistedPart ? [{ name: 'xl/hidden.xml', text: '<hidden/>', unlisted: true }] : []),
    { name: 'xl/worksheets/sheet1.xml', text: sheet, declaredSize: attack.declare?.part === 'sheet' ? attack.declare.bytes : undefined, fill: pad?.part === 'sheet' ? { at: sheetHead.length, byte: 0x20, length: pad.bytes } : undefined },
    {
      name: 'xl/sharedStrings.xml', text: sst, declaredSize: attack.declare?.part === 'sharedStrings' ? attack.declare.bytes : undefined,
      fill: pad?.part === 'sharedStrings' ? { at: sst.indexOf(firstString) + firstString.length, byte: 0x20, length: pad.bytes } : undefined,
    },
  ]);
}
