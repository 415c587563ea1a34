/**
 * Reads an .xlsx batch file with exceljs's streaming WorkbookReader: the
 * workbook is never loaded whole, rows are handed over one at a time. The sheet
 * is the one named by batch.sheet, else the first visible one; its first
 * non-empty row is the header, matched to batch columns as a CSV header is; each
 * cell becomes the text a CSV file would hold (see cell-values.ts), so the row
 * rules are the same. A row is named by its number in the sheet, and every
 * issue gets its cell (`Payouts!C7`).
 *
 * exceljs is told to hand the shared strings over (kept packed here) rather
 * than keep them itself: it then sets every sheet aside in a temporary file
 * (deleted once read) and reads it after the whole archive, with the workbook's
 * sheet names, styles (which numbers are dates) and strings known, whatever the
 * order of the parts in the archive.
 */
import { ReadStream, createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import { sheetPrefix } from './cell-values.js';
import { rowBuilder } from './columns.js';
import { BatchFileError } from './file-error.js';
import type { BatchRow, OpenedBatch, ReaderOptions } from './opened-batch.js';
import type { RecordBatch, SheetRow, SheetShape } from './sheet-rows.js';
import { convert, emptySheet, placer, planHeader, readRow } from './sheet-rows.js';
import type { SpooledSheets } from './sheet-spool.js';
import { openArchive } from './workbook-archive.js';
import type { HashedBytes } from './workbook-source.js';
import { SharedStrings } from './workbook-source.js';

/** What this reader uses of exceljs's streaming objects (its typings leave most of it out). */
interface SheetReader {
  name: string;
  /** The sheet's rows, a chunk of the sheet's XML at a time. */
  parse(): AsyncGenerator<{ eventType: string; value: unknown }[]>;
  /** The sheet's XML: a stream of the temporary file it was set aside in. */
  iterator?: unknown;
}
interface StreamingWorkbook {
  model?: { sheets?: { name: string; state?: string }[] };
  properties?: { model?: { date1904?: boolean } };
  parse(): AsyncIterator<{ eventType?: string; value?: unknown; index?: number; text?: unknown }>;
}

/**
 * A stream given up: closed, and its errors ignored. exceljs opens a sheet's
 * temporary file as it hands the sheet over and deletes it as soon as it is
 * asked for the next one, so an open still pending then fails (ENOENT), with no
 * one listening: an uncaught error that would end the process.
 */
function discard(stream: Readable): void {
  stream.on('error', () => {});
  stream.destroy();
}

/** A sheet handed over but not read: the temporary file exceljs opened for it is closed. */
function skip(sheet: SheetReader): void {
  if (sheet.iterator instanceof Readable) discard(sheet.iterator);
}

/**
 * exceljs reads a sheet set aside in a temporary file 64 KiB at a time and
 * builds the objects of a whole chunk at once (several per cell): read 16 KiB at
 * a time, fewer are alive when the garbage collector runs. With 200,000 rows,
 * about 20 MB less at the peak, and a tenth faster. The sheet's own stream, as
 * exceljs opened it, is what it reads when this does not apply.
 */
function readInSmallerChunks(sheet: SheetReader): void {
  const opened = sheet.iterator;
  if (!(opened instanceof ReadStream) || typeof opened.path !== 'string') return;
  const smaller = createReadStream(opened.path, { highWaterMark: 16 * 1024 });
  discard(opened);
  sheet.iterator = smaller;
}

function notAWorkbook(error: unknown): BatchFileError {
  if (error instanceof BatchFileError) return error;
  const reason = (error as Error).message === 'FILE_ENDED' ? 'the archive is cut short (still being written, or damaged)' : (error as Error).message;
  return new BatchFileError('not_a_workbook', null, `the file cannot be read as an .xlsx workbook: ${reason}`);
}

/** A shared string's text: plain, or the runs of rich text joined. */
function sharedText(text: unknown): string {
  if (typeof text === 'string') return text;
  const runs = (text as { richText?: { text?: unknown }[] } | null)?.richText;
  return Array.isArray(runs) ? runs.map((run) => (typeof run.text === 'string' ? run.text : '')).join('') : '';
}

/** The workbook read part by part: shared strings kept, sheets handed over, exceljs's errors restated. */
class WorkbookParts {
  readonly strings: SharedStrings;
  private readonly parts: ReturnType<StreamingWorkbook['parse']>;

  constructor(readonly workbook: StreamingWorkbook, private readonly bytes: HashedBytes, private readonly spooled: SpooledSheets, maxBytes: number) {
    this.strings = new SharedStrings(maxBytes);
    this.parts = workbook.parse();
  }

  /** The next sheet, or null when there is none left. */
  async nextSheet(): Promise<SheetReader | null> {
    for (;;) {
      let part: IteratorResult<{ eventType?: string; value?: unknown; index?: number; text?: unknown }>;
      try {
        part = await this.parts.next();
      } catch (error) {
        throw this.bytes.failure ?? notAWorkbook(error);
      }
      if (this.bytes.failure) throw this.bytes.failure; // a part refused as it inflated: what exceljs made of it is not used
      if (part.done) return null;
      if (part.value.eventType === 'worksheet') return part.value.value as SheetReader;
      if (typeof part.value.index === 'number') this.strings.add(sharedText(part.value.text));
    }
  }

  /** The sheets' names in the workbook's order, and the first visible one. */
  sheetNames(): { all: string[]; first: string | null } {
    const sheets = this.workbook.model?.sheets ?? [];
    const visible = sheets.find((s) => s.state === undefined || s.state === 'visible') ?? sheets[0];
    return { all: sheets.map((s) => s.name), first: visible?.name ?? null };
  }

  /** Reads on past the other sheets (exceljs then deletes their temporary files) and the archive's end. */
  async finish(): Promise<void> {
    for (let sheet = await this.nextSheet(); sheet; sheet = await this.nextSheet()) skip(sheet);
    await this.bytes.toEnd();
  }

  /** Gives up part way: what is open is closed; what is left is cleaned up as far as it can be. */
  async abandon(current: AsyncIterator<unknown> | null): Promise<void> {
    try {
      await current?.return?.();
      await this.finish();
    } catch {
      // Already failing: the first error is the one reported.
    } finally {
      this.bytes.close();
      this.spooled.removeAll(); // what exceljs set aside and, failing, never deleted
    }
  }
}

async function chooseSheet(parts: WorkbookParts, wanted: string | undefined): Promise<SheetReader> {
  for (let sheet = await parts.nextSheet(); sheet; sheet = await parts.nextSheet()) {
    const name = wanted ?? parts.sheetNames().first;
    if (name === null || sheet.name === name) return sheet;
    skip(sheet);
  }
  const { all } = parts.sheetNames();
  const listed = all.length > 0 ? `its sheets are ${all.map((n) => `"${n}"`).join(', ')}` : 'it has no sheet at all';
  throw new BatchFileError('sheet_not_found', null, wanted === undefined ? `the workbook has no sheet to read: ${listed}` : `the workbook has no sheet named "${wanted}" (batch.sheet): ${listed}`);
}

/**
 * The sheet's rows a chunk of its XML at a time (exceljs hands them over so).
 * Each chunk is turned into text records in one pass as it arrives, and
 * exceljs's objects for it (several per cell) are dropped before any row waits
 * on validation or the store.
 */
async function* rowChunks(sheet: SheetReader, bytes: HashedBytes): AsyncGenerator<SheetRow[]> {
  const chunks = sheet.parse();
  for (;;) {
    let next: IteratorResult<{ eventType: string; value: unknown }[]>;
    try {
      next = await chunks.next();
    } catch (error) {
      throw bytes.failure ?? notAWorkbook(error);
    }
    if (bytes.failure) throw bytes.failure;
    if (next.done) return;
    const rows: SheetRow[] = [];
    for (const event of next.value) if (event.eventType === 'row') rows.push(event.value as SheetRow);
    if (rows.length > 0) yield rows;
  }
}

export async function openSpreadsheet(path: string, options: ReaderOptions): Promise<OpenedBatch> {
  const { bytes, spooled } = await openArchive(path, options);
  const workbook = new ExcelJS.stream.xlsx.WorkbookReader(bytes.stream, {
    worksheets: 'emit', sharedStrings: 'emit', styles: 'cache', hyperlinks: 'ignore', entries: 'ignore',
  }) as unknown as StreamingWorkbook;
  const parts = new WorkbookParts(workbook, bytes, spooled, options.maxSharedStringsBytes);
  let chosen: SheetReader | null = null;
  let chunks: AsyncGenerator<SheetRow[]> | null = null;
  try {
    const sheet = await chooseSheet(parts, options.sheet);
    chosen = sheet;
    const prefix = sheetPrefix(sheet.name);
    const shape: SheetShape = { prefix, date1904: workbook.properties?.model?.date1904 === true, strings: parts.strings, decimalSeparator: options.decimalSeparator ?? '.' };
    readInSmallerChunks(sheet);
    const sheetChunks = rowChunks(sheet, bytes);
    chunks = sheetChunks;

    // The header: the first row with any text. The rest of its chunk is rows.
    let header: string[] | null = null;
    let headerRow = 0;
    let rest: SheetRow[] = [];
    while (header === null) {
      const next = await sheetChunks.next();
      if (next.done) throw emptySheet(sheet.name, prefix, options.sheet !== undefined);
      for (let i = 0; i < next.value.length && header === null; i++) {
        const row = next.value[i] as SheetRow;
        header = readRow(row, shape, Number.POSITIVE_INFINITY, 0, options.maxRowCharacters);
        headerRow = row.number;
        rest = next.value.slice(i + 1);
      }
    }
    const columns = planHeader(header, headerRow, prefix, options, { read: sheet.name, all: parts.sheetNames().all });
    const build = rowBuilder(columns);
    const width = header.length;
    const amountColumn = columns.fields.indexOf('output_amount') + 1;
    const read = (row: SheetRow): string[] | null => readRow(row, shape, width, amountColumn, options.maxRowCharacters);
    const first = convert(rest, read);
    rest = [];

    async function* rows(): AsyncGenerator<BatchRow> {
      let count = 0;
      let finished = false;
      try {
        for (let batch: RecordBatch | null = first; batch; ) {
          for (const { line, record } of batch.records) {
            if (record === null) continue; // a row of empty cells, as spreadsheets leave at the end
            count += 1;
            yield { line, fields: build(record) };
          }
          if (batch.error) throw batch.error;
          const next = await sheetChunks.next();
          batch = next.done ? null : convert(next.value, read);
        }
        if (count === 0) throw new BatchFileError('no_rows', headerRow, `${prefix}${headerRow}:${headerRow}: the sheet has a header (row ${headerRow}) but no rows`);
        await parts.finish();
        finished = true;
      } finally {
        if (!finished) {
          skip(sheet);
          await parts.abandon(sheetChunks);
        }
      }
    }

    return {
      delimiter: null,
      sheet: sheet.name,
      columns,
      rows: rows(),
      sha256: () => bytes.sha256(),
      place: placer(header, prefix),
    };
  } catch (error) {
    if (chosen) skip(chosen);
    await parts.abandon(chunks);
    throw error;
  }
}
