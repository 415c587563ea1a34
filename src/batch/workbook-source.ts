/**
 * The bytes under an .xlsx reader: a first look at what the file is, the bytes
 * themselves hashed (SHA-256) and counted as exceljs reads them, and the
 * workbook's shared strings kept packed.
 */
import { createHash } from 'node:crypto';
import type { ReadStream } from 'node:fs';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { finished } from 'node:stream/promises';
import { BatchFileError } from './file-error.js';
import { tooLarge } from './file-size.js';

const ZIP = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const OLE2 = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

/** An .xlsx file is a zip archive: anything else is named in the error, with what it looks like. */
export async function sniffWorkbook(path: string): Promise<void> {
  const head = Buffer.alloc(512);
  let length: number;
  try {
    const handle = await open(path, 'r');
    try {
      length = (await handle.read(head, 0, head.length, 0)).bytesRead;
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw new BatchFileError('file_unreadable', null, `cannot read the file: ${(error as Error).message}`);
  }
  const start = head.subarray(0, length);
  if (start.subarray(0, 4).equals(ZIP)) return;
  if (start.subarray(0, 8).equals(OLE2)) {
    throw new BatchFileError('not_a_workbook', null, 'the file is an Excel 97-2003 workbook (.xls) or a password-protected one, not an .xlsx workbook: save it as "Excel Workbook (.xlsx)" without a password, or as "CSV UTF-8"');
  }
  // eslint-disable-next-line no-control-regex -- printable text and line ends only
  const text = /^[\x09\x0a\x0d\x20-\x7e\x80-\xff]*$/.test(start.toString('latin1'));
  throw new BatchFileError('not_a_workbook', null, `the file is not an .xlsx workbook (a zip archive)${text ? ': it looks like text; a CSV file must be named .csv' : ''}`);
}

/**
 * exceljs 4.4 pipes the file into unzipper's Parse stream, which announces
 * 'end' by itself as soon as its input is all written ('finish'), while entries
 * it has already parsed may still wait in its readable buffer (exceljs pauses it
 * between entries). Those entries are then never seen: often xl/workbook.xml,
 * which exceljs and other writers store last, and the reader fails with "Cannot
 * read properties of undefined (reading 'sheets')" (exceljs issue #3064), or
 * styles or shared strings go missing. About one read in fifty, by timing. Only
 * the stream's own 'end', sent once its buffer is drained, is let through;
 * for any other stream this changes nothing.
 */
function holdEarlyEnd(destination: NodeJS.WritableStream): void {
  const stream = destination as unknown as Readable;
  if (!(stream instanceof Readable)) return;
  const emit = stream.emit.bind(stream);
  stream.emit = ((event: string | symbol, ...args: unknown[]): boolean => (event === 'end' && !stream.readableEnded ? false : emit(event, ...args))) as Readable['emit'];
}

/**
 * The file's bytes as a stream for exceljs, hashed and counted on the way. A
 * failure (the file grew over the limit, or a read failed) ends the stream, so
 * that exceljs stops at a cut archive rather than waiting, and is kept to be
 * thrown in place of exceljs's own complaint.
 */
export class HashedBytes {
  readonly stream: Transform;
  bytesRead = 0;
  failure: BatchFileError | null = null;
  private readonly hash = createHash('sha256');
  private readonly file: ReadStream;

  /** `onPipe` is given what exceljs pipes the bytes into (its unzip stream), to watch what it inflates. */
  constructor(path: string, maxFileBytes: number, onPipe?: (destination: NodeJS.WritableStream) => void) {
    this.file = createReadStream(path, { highWaterMark: 64 * 1024 });
    this.stream = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        this.bytesRead += chunk.length;
        if (this.bytesRead > maxFileBytes) {
          done();
          this.fail(tooLarge(this.bytesRead, maxFileBytes));
          return;
        }
        this.hash.update(chunk);
        done(null, chunk);
      },
    });
    const pipe = this.stream.pipe.bind(this.stream);
    this.stream.pipe = (<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T => {
      holdEarlyEnd(destination);
      onPipe?.(destination);
      return pipe(destination, options);
    }) as Transform['pipe'];
    this.file.on('error', (error) => this.fail(new BatchFileError('file_unreadable', null, `cannot read the file: ${error.message}`)));
    this.file.pipe(this.stream);
  }

  /** Stops the bytes: exceljs sees the archive cut short, and `failure` is what the reader reports. */
  fail(failure: BatchFileError): void {
    this.failure ??= failure;
    this.file.unpipe(this.stream);
    this.file.destroy();
    this.stream.end();
  }

  /** Reads what exceljs left unread (nothing, for a whole archive), so that the hash covers every byte. */
  async toEnd(): Promise<void> {
    if (!this.stream.readableEnded) {
      this.stream.unpipe();
      this.stream.resume();
      await finished(this.stream);
    }
    if (this.failure) throw this.failure;
  }

  sha256(): string {
    return this.hash.copy().digest('hex');
  }

  close(): void {
    this.file.destroy();
    this.stream.destroy();
  }
}

/** The shared strings are packed into buffers of this size, each string whole in one: no copy of the table as it grows. */
const STRING_CHUNK_BYTES = 1024 * 1024;

/**
 * The workbook's shared strings (Excel keeps every text cell's string in one
 * table, referenced by index from anywhere in a sheet, so a streaming reader has
 * to keep the table). Packed as UTF-8 in buffers of 1 MiB with a place per
 * string: a few bytes of overhead each rather than an object each. Bounded by
 * batch.max_shared_strings_bytes, the memory the table may take.
 */
export class SharedStrings {
  private readonly chunks: Buffer[] = [];
  private used = 0;
  private total = 0;
  /** Per string: its chunk, and its start and end in it. */
  private places = new Uint32Array(3 * 1024);
  private count = 0;

  constructor(private readonly maxBytes: number) {}

  add(text: string): void {
    const length = Buffer.byteLength(text, 'utf8');
    if (this.total + length > this.maxBytes) {
      throw new BatchFileError('shared_strings_too_large', null, `xl/sharedStrings.xml: the workbook's shared strings (the text of its text cells) come to more than ${this.maxBytes} bytes (batch.max_shared_strings_bytes)`);
    }
    let chunk = this.chunks[this.chunks.length - 1];
    if (!chunk || this.used + length > chunk.length) {
      chunk = Buffer.allocUnsafe(Math.max(STRING_CHUNK_BYTES, length));
      this.chunks.push(chunk);
      this.used = 0;
    }
    if (3 * (this.count + 1) > this.places.length) {
      const grown = new Uint32Array(this.places.length * 2);
      grown.set(this.places);
      this.places = grown;
    }
    const start = this.used;
    this.used += chunk.write(text, start, 'utf8');
    this.total += length;
    const at = 3 * this.count;
    this.places[at] = this.chunks.length - 1;
    this.places[at + 1] = start;
    this.places[at + 2] = this.used;
    this.count += 1;
  }

  /** The string at `index`, or undefined when the table has no such entry. */
  get(index: number): string | undefined {
    if (!Number.isInteger(index) || index < 0 || index >= this.count) return undefined;
    const at = 3 * index;
    return (this.chunks[this.places[at] as number] as Buffer).toString('utf8', this.places[at + 1], this.places[at + 2]);
  }
}
