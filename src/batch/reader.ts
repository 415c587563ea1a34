/**
 * Reads a batch file as a stream: never held in memory whole. A `.xlsx` file is
 * a spreadsheet, read by xlsx-reader.ts; any other is CSV text. Bytes are hashed
 * (SHA-256) and counted against the size limit, decoded as strict UTF-8, parsed
 * by csv-parse, and yielded as rows keyed by batch column with the line each row
 * starts on. Anything that makes the file unreadable as a batch is a
 * BatchFileError naming the line.
 */
import { createHash } from 'node:crypto';
import { Readable, pipeline } from 'node:stream';
import { parse } from 'csv-parse';
import { planColumns, rowBuilder } from './columns.js';
import { detectDelimiter } from './delimiter.js';
import type { FileErrorCode } from './file-error.js';
import { BatchFileError } from './file-error.js';
import { checkSize } from './file-size.js';
import type { BatchRow, OpenedBatch, ReaderOptions } from './opened-batch.js';
import type { ByteState } from './text-chunks.js';
import { textChunks } from './text-chunks.js';

/** Reads text until the first line is complete, for the delimiter; returns it and what was read. */
export async function readFirstLine(chunks: AsyncIterator<string>, maxChars: number): Promise<{ firstLine: string; buffered: string }> {
  let buffered = '';
  for (;;) {
    const newline = buffered.indexOf('\n');
    if (newline !== -1) return { firstLine: buffered.slice(0, newline), buffered };
    if (buffered.length > maxChars) throw new BatchFileError('row_too_large', 1, `the header line is longer than ${maxChars} characters (batch.max_row_characters)`);
    const next = await chunks.next();
    if (next.done) return { firstLine: buffered, buffered };
    buffered += next.value;
  }
}

const CSV_ERRORS: Record<string, FileErrorCode> = {
  CSV_QUOTE_NOT_CLOSED: 'unclosed_quote',
  CSV_RECORD_INCONSISTENT_FIELDS_LENGTH: 'field_count',
  CSV_MAX_RECORD_SIZE: 'row_too_large',
  CSV_INVALID_CLOSING_QUOTE: 'invalid_quote',
  CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE: 'invalid_quote',
  CSV_INVALID_OPENING_QUOTE: 'invalid_quote',
};

/**
 * csv-parse's errors, restated for a person, with the line. `linesBefore`: the
 * lines of the file before the text parsed (a piece of it parsed on its own).
 */
export function fileErrorFrom(error: unknown, rowStart: number, options: Pick<ReaderOptions, 'maxRowCharacters'>, linesBefore = 0): unknown {
  if (error instanceof BatchFileError) return error;
  const csv = error as { code?: string; lines?: number; message: string };
  if (typeof csv.code !== 'string' || !csv.code.startsWith('CSV_')) return error;
  const line = csv.lines === undefined ? rowStart : csv.lines + linesBefore;
  const code = CSV_ERRORS[csv.code] ?? 'csv_syntax';
  switch (code) {
    case 'unclosed_quote':
      return new BatchFileError(code, rowStart, `line ${rowStart}: a quoted field opened in the row starting here is never closed (the file ends inside the quotes)`);
    case 'field_count': {
      const [, expected, got] = /expect (\d+), got (\d+)/.exec(csv.message) ?? [];
      return new BatchFileError(code, line, `line ${line}: the row has ${got ?? 'a different number of'} fields, the header has ${expected ?? 'another number'}`);
    }
    case 'row_too_large':
      return new BatchFileError(code, line, `line ${line}: a row is longer than ${options.maxRowCharacters} characters (batch.max_row_characters)`);
    case 'invalid_quote':
      return new BatchFileError(code, line, `line ${line}: a quote is misplaced; a quote inside a quoted field must be doubled ("")`);
    default:
      return new BatchFileError(code, line, `line ${line}: ${csv.message}`);
  }
}

/** Opens a batch file: a spreadsheet by its `.xlsx` name, an ISO 20022 pain.001 by its `.xml` name, CSV text otherwise. */
export async function openBatch(path: string, options: ReaderOptions): Promise<OpenedBatch> {
  // exceljs is loaded only for a spreadsheet: a daemon that never sees one never holds it in memory.
  if (/\.xlsx$/i.test(path)) return (await import('./xlsx-reader.js')).openSpreadsheet(path, options);
  if (/\.xml$/i.test(path)) return (await import('./iso20022/pain001-reader.js')).openPain001(path, options, options.iso20022 ?? { senders: {}, allowEquivalentAmount: false });
  return openCsv(path, options);
}

async function openCsv(path: string, options: ReaderOptions): Promise<OpenedBatch> {
  await checkSize(path, options.maxFileBytes);
  const state: ByteState = { hash: createHash('sha256'), bytes: 0, lines: 1 };
  const chunks = textChunks(path, options, state);
  let source: Readable | null = null;
  try {
    return await openedCsv(chunks, state, options, (made) => (source = made));
  } catch (error) {
    // A file refused at its header is closed now, not when its handle is collected (Node warns of that, DEP0137).
    (source as Readable | null)?.destroy();
    await chunks.return(undefined);
    throw error;
  }
}

async function openedCsv(chunks: AsyncGenerator<string>, state: ByteState, options: ReaderOptions, made: (source: Readable) => void): Promise<OpenedBatch> {
  const { firstLine, buffered } = await readFirstLine(chunks, options.maxRowCharacters);
  const delimiter = options.delimiter === 'auto' ? detectDelimiter(firstLine) : options.delimiter;
  const source = Readable.from((async function* () {
    yield buffered;
    yield* chunks;
  })(), { objectMode: false, encoding: 'utf8' });
  const parser = parse({
    delimiter,
    bom: true,
    trim: true,
    relax_quotes: true,
    skip_empty_lines: true,
    info: true,
    max_record_size: options.maxRowCharacters,
  });
  made(source);
  pipeline(source, parser, () => {});
  const records = parser[Symbol.asyncIterator]() as AsyncIterator<{ record: string[]; info: { lines: number; empty_lines: number } }>;

  let lastEnd = 0;
  let lastEmpty = 0;
  const next = async (): Promise<IteratorResult<{ record: string[]; info: { lines: number; empty_lines: number } }>> => {
    try {
      return await records.next();
    } catch (error) {
      throw fileErrorFrom(error, lastEnd + 1, options);
    }
  };

  const header = await next();
  if (header.done) throw new BatchFileError('empty_file', null, 'the file has no header and no rows');
  lastEnd = header.value.info.lines;
  lastEmpty = header.value.info.empty_lines;
  const columns = planColumns(header.value.record, options.columnMapping, options.maxColumns);
  const build = rowBuilder(columns);

  async function* rows(): AsyncGenerator<BatchRow> {
    let count = 0;
    // csv-parse's errors are restated around the whole loop, not per row: an async
    // wrapper around every read would cost a promise for each of a million rows.
    try {
      for (let item = await records.next(); !item.done; item = await records.next()) {
        const { record, info } = item.value;
        const line = lastEnd + 1 + (info.empty_lines - lastEmpty);
        lastEnd = info.lines;
        lastEmpty = info.empty_lines;
        if (record.every((cell) => cell.trim() === '')) continue; // a row of empty cells, as spreadsheets leave at the end
        count += 1;
        yield { line, fields: build(record) };
      }
    } catch (error) {
      throw fileErrorFrom(error, lastEnd + 1, options);
    }
    if (count === 0) throw new BatchFileError('no_rows', null, 'the file has a header but no rows');
  }

  return { delimiter, columns, rows: rows(), sha256: () => state.hash.copy().digest('hex') };
}
