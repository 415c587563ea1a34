/**
 * A report's cells, typed once and written twice: as CSV text and as a
 * spreadsheet cell (src/reports/workbook.ts). Pure. Money stays integer minor
 * units here [2.1]; a major amount is formatted from the integer, and becomes a
 * spreadsheet number only through its exact decimal text, and only while the
 * spreadsheet can hold it exactly.
 */
import { currencyDecimals, formatMinor } from '../validate/money.js';

/** CSV formula injection: =, +, -, @ (and tab, carriage return) at the start make a spreadsheet evaluate the cell. */
export function neutralise(value: string): string {
  if (!/^[=+\-@\t\r]/.test(value)) return value;
  if (/^[+-]?\d+(\.\d+)?$/.test(value) || /^\+[1-9]\d{6,14}$/.test(value)) return value;
  return `'${value}`;
}

export type Cell =
  | { kind: 'text'; value: string }
  /** A line number or a count. */
  | { kind: 'integer'; value: number }
  /** An amount in minor units, as an integer. */
  | { kind: 'minor'; value: bigint }
  /** The same amount in major units, with its currency's decimals. */
  | { kind: 'major'; value: bigint; decimals: number }
  /** An instant, ISO 8601 (UTC) as paybatch keeps it. */
  | { kind: 'instant'; value: string }
  | null;

export const text = (value: string | null | undefined): Cell => (value === null || value === undefined || value === '' ? null : { kind: 'text', value });
export const integer = (value: number | null | undefined): Cell => (value === null || value === undefined ? null : { kind: 'integer', value });
export const instant = (value: string | null | undefined): Cell => (value ? { kind: 'instant', value } : null);

/** Minor units as the store keeps them (an integer string) or as a bigint; anything else is shown as it is, never guessed at. */
const asMinor = (value: bigint | string | null | undefined): bigint | string | null => {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'bigint') return value;
  return /^-?\d+$/.test(value) ? BigInt(value) : value;
};

export function minor(value: bigint | string | null | undefined): Cell {
  const amount = asMinor(value);
  if (amount === null) return null;
  return typeof amount === 'bigint' ? { kind: 'minor', value: amount } : { kind: 'text', value: amount };
}

/** A currency's decimals [2.1]: ISO 4217's, and 2 for a code it does not know (as every report has done). */
export const decimalsOf = (currency: string | null | undefined): number => currencyDecimals(currency ?? '') ?? 2;

export function major(value: bigint | string | null | undefined, currency: string | null | undefined): Cell {
  const amount = asMinor(value);
  if (amount === null) return null;
  return typeof amount === 'bigint' ? { kind: 'major', value: amount, decimals: decimalsOf(currency) } : { kind: 'text', value: amount };
}

export interface CsvOptions {
  /** Major amounts with a decimal comma (`1600,00`), for spreadsheets in locales that read `.` otherwise. */
  decimalComma?: boolean;
}

/** The cell as a CSV field, neutralised. */
export const csvField = (cell: Cell, options: CsvOptions = {}): string => neutralise(csvText(cell, options));

/** The cell as CSV text, before neutralisation. */
export function csvText(cell: Cell, options: CsvOptions = {}): string {
  if (cell === null) return '';
  switch (cell.kind) {
    case 'text':
    case 'instant':
      return cell.value;
    case 'integer':
      return String(cell.value);
    case 'minor':
      return cell.value.toString();
    case 'major': {
      const value = formatMinor(cell.value, cell.decimals);
      return options.decimalComma ? value.replace('.', ',') : value;
    }
  }
}

/**
 * Excel keeps 15 significant digits of a number: more (a 16-digit amount, even
 * one under 2^53) would be shown and added rounded. Such an amount is written as
 * text, exactly, in both its columns.
 */
export const SPREADSHEET_DIGITS = 15;

/** A spreadsheet cell's number format for a major amount: thousands grouped, the currency's decimals. */
export const amountFormat = (decimals: number): string => (decimals === 0 ? '#,##0' : `#,##0.${'0'.repeat(decimals)}`);
export const INTEGER_FORMAT = '0';
/** Times are UTC, as in the CSV (a spreadsheet cell has no time zone). */
export const INSTANT_FORMAT = 'yyyy-mm-dd hh:mm:ss';
/** Excel's most characters in one cell; longer text is cut, ending in an ellipsis. */
export const MAX_CELL_TEXT = 32_767;

export type SheetValue = { value: string | number | Date; numFmt: string | null } | null;

const fitsSpreadsheet = (amount: bigint): boolean => (amount < 0n ? -amount : amount).toString().length <= SPREADSHEET_DIGITS;

/** Characters XML 1.0 cannot hold (lone surrogates, U+FFFE, U+FFFF; the control characters exceljs drops itself) become U+FFFD. */
const wellFormed = (value: string): string => value.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|[\uFFFE\uFFFF]/g, '\uFFFD');

/**
 * Text as a spreadsheet cell: written as a value, never as a formula, and still
 * neutralised as in the CSV (`neutralise`), so that the sheet saved again as CSV
 * and opened stays inert.
 */
export function sheetText(value: string): string {
  const safe = neutralise(wellFormed(value));
  return safe.length <= MAX_CELL_TEXT ? safe : `${safe.slice(0, MAX_CELL_TEXT - 1)}…`;
}

/** The cell as a typed spreadsheet value and its number format. */
export function sheetValue(cell: Cell): SheetValue {
  if (cell === null) return null;
  switch (cell.kind) {
    case 'text':
      return { value: sheetText(cell.value), numFmt: null };
    case 'integer':
      return { value: cell.value, numFmt: INTEGER_FORMAT };
    case 'minor':
      // Number() of the integer's own digits: exact, as it has at most 15 of them.
      return fitsSpreadsheet(cell.value) ? { value: Number(cell.value.toString()), numFmt: INTEGER_FORMAT } : { value: cell.value.toString(), numFmt: null };
    case 'major': {
      const exact = formatMinor(cell.value, cell.decimals);
      // The nearest double to "1250.05": what Excel itself stores when one types it; shown with the currency's decimals.
      return fitsSpreadsheet(cell.value) ? { value: Number(exact), numFmt: amountFormat(cell.decimals) } : { value: exact, numFmt: null };
    }
    case 'instant': {
      const at = Date.parse(cell.value);
      return Number.isNaN(at) ? { value: sheetText(cell.value), numFmt: null } : { value: new Date(at), numFmt: INSTANT_FORMAT };
    }
  }
}
