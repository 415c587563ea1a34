/**
 * A sheet's rows as the text records a CSV file would give (see
 * cell-values.ts), its header matched to batch columns, and issues placed at
 * their cell. Pure: exceljs's row objects in, text out.
 */
import ExcelJS from 'exceljs';
import type { Issue } from '../validate/issue.js';
import type { CellContext } from './cell-values.js';
import { cellText, columnLetters } from './cell-values.js';
import type { ColumnPlan } from './columns.js';
import { planColumns } from './columns.js';
import { BatchFileError } from './file-error.js';
import type { ReaderOptions } from './opened-batch.js';
import type { SharedStrings } from './workbook-source.js';

/** What is used of exceljs's streaming rows and cells (its typings leave most of it out). */
export interface SheetCell {
  value: unknown;
  numFmt?: string;
  type: number;
  result?: unknown;
}
export interface SheetRow {
  number: number;
  eachCell(callback: (cell: SheetCell, column: number) => void): void;
}
/** What reading a sheet's cells needs to know of its workbook. */
export interface SheetShape {
  prefix: string;
  date1904: boolean;
  strings: SharedStrings;
  decimalSeparator: '.' | ',';
}

const FORMULA = ExcelJS.ValueType.Formula as number;

/**
 * The text of every cell of a row up to `width` columns (Infinity for the
 * header), by position; null for a row of empty cells. Text cells, the most of a
 * sheet, take the short way: a huge sheet's cells are read by the million.
 */
export function readRow(row: SheetRow, shape: SheetShape, width: number, amountColumn: number, maxCharacters: number): string[] | null {
  const record: string[] = [];
  let characters = 0;
  let empty = true;
  row.eachCell((cell, column) => {
    if (column > width) return;
    let text = cell.value;
    if (text !== null && typeof text === 'object' && 'sharedString' in text) {
      text = shape.strings.get((text as { sharedString: number }).sharedString);
      if (text === undefined) {
        const ref = `${shape.prefix}${columnLetters(column)}${row.number}`;
        throw new BatchFileError('not_a_workbook', row.number, `${ref} refers to a shared string the workbook does not have`, ref);
      }
    }
    if (typeof text !== 'string') {
      const at: CellContext = { ref: `${shape.prefix}${columnLetters(column)}${row.number}`, numFmt: cell.numFmt, date1904: shape.date1904, decimalSeparator: column === amountColumn ? shape.decimalSeparator : '.' };
      const read = cellText(text, at, cell.type === FORMULA ? cell.result : undefined);
      if ('problem' in read) throw new BatchFileError(read.problem.code, row.number, read.problem.message, at.ref);
      text = read.text;
    }
    const value = text as string;
    if (empty && value.trim() !== '') empty = false;
    characters += value.length;
    record[column - 1] = value;
  });
  if (characters > maxCharacters) {
    const where = `${shape.prefix}${row.number}:${row.number}`;
    throw new BatchFileError('row_too_large', row.number, `${where}: the row holds more than ${maxCharacters} characters (batch.max_row_characters)`, where);
  }
  return empty ? null : record;
}

/** The header's column errors name the header's row, not line 1. */
/**
 * `sheets`: the sheet read and every sheet of the workbook. When the sheet read was
 * chosen as the first visible one (no batch.sheet) and has no payout header (a "Read
 * me" sheet before the payouts), the error names the sheets found and batch.sheet.
 */
export function planHeader(header: string[], headerRow: number, prefix: string, options: ReaderOptions, sheets?: { read: string; all: readonly string[] }): ColumnPlan {
  for (let i = 0; i < header.length; i++) header[i] ??= '';
  try {
    const plan = planColumns(header, options.columnMapping, options.maxColumns);
    return { ...plan, warnings: plan.warnings.map((warning) => ({ ...warning, line: headerRow })) };
  } catch (error) {
    if (!(error instanceof BatchFileError)) throw error;
    const where = `${prefix}${headerRow}:${headerRow}`;
    throw new BatchFileError(error.code, headerRow, `${where} (the header row): ${error.message}${sheetAdvice(error.code, options, sheets)}`, where);
  }
}

function sheetAdvice(code: string, options: ReaderOptions, sheets: { read: string; all: readonly string[] } | undefined): string {
  if (code !== 'missing_columns' || options.sheet !== undefined || !sheets) return '';
  const others = sheets.all.filter((name) => name !== sheets.read);
  const listed = sheets.all.map((name) => `"${name}"`).join(', ');
  return others.length > 0
    ? `. Sheet "${sheets.read}" was read, the first visible one; the workbook's sheets are ${listed}: name the sheet with the payouts in batch.sheet (e.g. "batch": {"sheet": "${others[0]}"})`
    : `. Sheet "${sheets.read}" was read, the workbook's only sheet`;
}

/** Where each of the file's column names is, for issues: the name as the header gives it to its letter. */
export function placer(header: readonly string[], prefix: string): (issue: Issue) => Issue {
  const letters = new Map<string, string>();
  header.forEach((name, index) => {
    const label = name.trim();
    if (label !== '' && !letters.has(label)) letters.set(label, columnLetters(index + 1));
  });
  return (issue) => {
    const letter = letters.get(issue.column);
    const cell = letter ? `${prefix}${letter}${issue.line}` : `${prefix}${issue.line}:${issue.line}`;
    // [2.1] An amount with more decimals than its currency is never rounded, whether typed or calculated.
    const note = issue.code === 'amount_too_precise' ? '; refused, never rounded: round it in the sheet (=ROUND) or type the amount as text' : '';
    return { ...issue, cell, message: `${cell}: ${issue.message}${note}` };
  };
}

/** A row of the sheet as text, by its number in the sheet; record null for a row of empty cells. */
export interface SheetRecord {
  line: number;
  record: string[] | null;
}

/** Rows converted a chunk at a time, and the error that stopped the conversion part way, if any. */
export interface RecordBatch {
  records: SheetRecord[];
  error: unknown;
}

export function convert(rows: readonly SheetRow[], read: (row: SheetRow) => string[] | null): RecordBatch {
  const records: SheetRecord[] = [];
  try {
    for (const row of rows) records.push({ line: row.number, record: read(row) });
  } catch (error) {
    return { records, error };
  }
  return { records, error: null };
}

export const emptySheet = (sheet: string, prefix: string, configured: boolean): BatchFileError =>
  new BatchFileError('empty_sheet', null, configured
    ? `sheet "${sheet}" (batch.sheet) is empty: the header row and the rows go there`
    : `the first sheet, "${sheet}", is empty: the header row and the rows go there (or name another sheet with batch.sheet)`, `${prefix}A1`);

