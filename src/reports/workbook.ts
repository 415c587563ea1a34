/**
 * Report files as .xlsx workbooks, streamed (exceljs's WorkbookWriter): a row
 * goes to the file as it is added, so a batch of any size takes little memory.
 * Each sheet has the CSV file's columns, a bold header row, frozen panes under
 * it and column widths; cells are typed (src/reports/cells.ts) and written as
 * values, never formulas. Written as every paybatch file is: under a temporary
 * name, never through a link, renamed into place only once complete.
 */
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type ExcelJS from 'exceljs';
import type { Cell } from './cells.js';
import { sheetValue } from './cells.js';
import type { SafeStream } from '../workspace/safe-files.js';
import { openSafely } from '../workspace/safe-files.js';

export const XLSX_MEDIA_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

export interface SheetColumn {
  header: string;
  /** In characters; by default the header's, at least 12. */
  width?: number;
}

/** A sheet's contents: the same columns and rows as the CSV file it stands for. */
export interface Table {
  /** The sheet's name: at most 31 characters, none of []:*?/\. */
  name: string;
  columns: readonly (string | SheetColumn)[];
  rows: Iterable<Cell[]> | AsyncIterable<Cell[]>;
}

export interface SheetWriter {
  add(cells: readonly Cell[]): Promise<void>;
}

export interface WorkbookFile {
  sheet(name: string, columns: readonly (string | SheetColumn)[]): SheetWriter;
  commit(): Promise<void>;
  abandon(): Promise<void>;
}

/** Rows between two pauses that let the compression (run off the event loop) catch up: memory stays flat. */
const ROWS_PER_PAUSE = 500;

/**
 * One style object per number format ('' for none), shared by every cell that has it: exceljs
 * knows a style object it has seen, and would otherwise work out each cell's
 * style afresh (most of the time a workbook took to write). Never changed once made.
 */
const styles = new Map<string, Partial<ExcelJS.Style>>();
function styleFor(numFmt: string): Partial<ExcelJS.Style> {
  let style = styles.get(numFmt);
  if (!style) styles.set(numFmt, (style = Object.freeze(numFmt === '' ? {} : { numFmt })));
  return style;
}

const column = (c: string | SheetColumn): SheetColumn => (typeof c === 'string' ? { header: c } : c);

function addSheet(book: ExcelJS.stream.xlsx.WorkbookWriter, out: SafeStream, name: string, columns: readonly (string | SheetColumn)[]): SheetWriter & { commit(): void } {
  const sheet = book.addWorksheet(name, { views: [{ state: 'frozen', xSplit: 0, ySplit: 1, topLeftCell: 'A2', activeCell: 'A2' }] });
  sheet.columns = columns.map((c) => ({ width: column(c).width ?? Math.max(12, column(c).header.length + 2) }));
  const header = sheet.addRow(columns.map((c) => column(c).header));
  header.font = { bold: true };
  header.commit();
  let rows = 0;
  return {
    commit: () => sheet.commit(),
    async add(cells) {
      const row = sheet.addRow([]);
      cells.forEach((cell, index) => {
        const typed = sheetValue(cell);
        if (typed === null) return;
        const target = row.getCell(index + 1);
        target.value = typed.value;
        target.style = styleFor(typed.numFmt ?? '');
      });
      row.commit();
      rows += 1;
      if (rows % ROWS_PER_PAUSE === 0) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (out.stream.writableNeedDrain) await once(out.stream, 'drain');
      }
    },
  };
}

/** A workbook being written to `path` (inside the workspace `home`); nothing is at `path` until `commit`. */
export async function openWorkbook(home: string, path: string): Promise<WorkbookFile> {
  // Loaded when a workbook is written, not by every command that imports the reports (it takes most of a second).
  const { default: excel } = await import('exceljs');
  const out = await openSafely(home, path);
  // exceljs writes into a relay, not the file itself, so that a workbook given up can be cut off from its file first.
  const relay = new PassThrough();
  relay.pipe(out.stream);
  // Shared strings would keep every distinct text in memory until the end; inline text keeps the writer streaming.
  const book = new excel.stream.xlsx.WorkbookWriter({ stream: relay, useStyles: true, useSharedStrings: false });
  book.creator = 'paybatch';
  let current: { commit(): void } | null = null;
  return {
    sheet(name, columns) {
      // The sheets of a zip are written one after the other: the one before is finished first.
      current?.commit();
      const sheet = addSheet(book, out, name, columns);
      current = sheet;
      return sheet;
    },
    async commit() {
      await book.commit();
      await out.commit();
    },
    async abandon() {
      relay.unpipe(out.stream);
      relay.on('error', () => {}); // what the zip still writes to it is dropped
      relay.destroy();
      await out.abandon();
    },
  };
}

/** Writes the tables as one workbook, a sheet each, in order. */
export async function writeWorkbook(home: string, path: string, tables: readonly Table[]): Promise<void> {
  const book = await openWorkbook(home, path);
  try {
    for (const table of tables) {
      const sheet = book.sheet(table.name, table.columns);
      for await (const cells of table.rows) await sheet.add(cells);
    }
    await book.commit();
  } catch (error) {
    await book.abandon();
    throw error;
  }
}
