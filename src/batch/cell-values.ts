/**
 * A spreadsheet cell's value as the text a CSV file would hold in its place, so
 * that one set of row rules reads both. Pure, no I/O.
 *
 * - A number cell holds binary floating point. It becomes the shortest decimal
 *   that gives back exactly that binary value (ECMA-262 Number::toString, what
 *   Excel shows at full precision): 1234.5 stays 1234.5, and 0.1+0.2 is
 *   0.30000000000000004. Nothing is rounded here: the money rules [2.1] then
 *   accept or refuse that decimal like any amount typed as text. An integer
 *   beyond 2^53 is no longer the number that was typed: refused.
 * - A date cell is a count of days with no time zone; exceljs reads it as UTC
 *   midnight, so the UTC date is the day typed (YYYY-MM-DD). A time of day is
 *   kept, so that a date rule refuses it rather than a time being dropped.
 * - A formula gives the value saved with it (its cached result); without one,
 *   or with an error value (#N/A, #DIV/0!), the cell cannot be read.
 */
import type { FileErrorCode } from './file-error.js';

export type CellReading = { text: string } | { problem: { code: FileErrorCode; message: string } };

export interface CellContext {
  /** Where, for messages: Payouts!C7. */
  ref: string;
  /** The cell's number format, when the file's styles were read. */
  numFmt?: string;
  /** The workbook counts dates from 1904 (old Mac Excel). */
  date1904: boolean;
  /** How a number is written when it is an amount read by the rules with a decimal comma (batch.decimal_separator). */
  decimalSeparator?: '.' | ',';
}

/** Excel's serial day 25569 is 1970-01-01; a 1904 workbook counts 1462 days fewer. */
const UNIX_EPOCH_SERIAL = 25569;
const DAYS_1904 = 1462;
const MS_PER_DAY = 86_400_000;

/** The shortest decimal giving back `value`, written without an exponent; null when it is not a finite, exact number. */
export function decimalText(value: number): string | null {
  if (!Number.isFinite(value)) return null;
  if (Number.isInteger(value) && !Number.isSafeInteger(value)) return null;
  const shortest = String(value);
  const match = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(shortest);
  if (!match) return shortest;
  const [, sign, whole, fraction = '', exponent] = match as unknown as [string, string, string, string | undefined, string];
  const digits = whole + fraction;
  const point = whole.length + Number(exponent);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** YYYY-MM-DD in UTC (the day typed); with the time when it is not midnight. Null for an invalid date. */
export function dateText(date: Date): string | null {
  if (Number.isNaN(date.getTime())) return null;
  const iso = date.toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

/** A serial day number as a date, as exceljs reads date cells (a formula's result arrives as a bare number). */
export function serialDate(serial: number, date1904: boolean): Date {
  return new Date(Math.round((serial - UNIX_EPOCH_SERIAL + (date1904 ? DAYS_1904 : 0)) * MS_PER_DAY));
}

/** Whether a number format shows a date or time: y, m, d, h, s outside quoted text and [brackets] (as exceljs decides). */
export function isDateFormat(format: string | undefined): boolean {
  if (!format) return false;
  return /[ymdhMsb]/.test(format.replace(/\[[^\]]*]/g, '').replace(/"[^"]*"/g, ''));
}

/** 1 is A, 27 is AA. */
export function columnLetters(column: number): string {
  let letters = '';
  for (let n = column; n > 0; n = Math.floor((n - 1) / 26)) letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  return letters;
}

/** A sheet's name as a formula writes it: quoted unless plain ('My Payouts'!C7). */
export function sheetPrefix(sheet: string): string {
  const plain = /^[A-Za-z_][A-Za-z0-9_]*$/.test(sheet) && !/^[A-Za-z]{1,3}\d+$/.test(sheet) && !/^R\d*C\d*$/i.test(sheet);
  return plain ? `${sheet}!` : `'${sheet.replace(/'/g, "''")}'!`;
}

const problem = (code: FileErrorCode, message: string): CellReading => ({ problem: { code, message } });

const shortFormula = (formula: string): string => (formula.length > 60 ? `${formula.slice(0, 57)}...` : formula);

function numberText(value: number, at: CellContext): CellReading {
  if (isDateFormat(at.numFmt)) return dateReading(serialDate(value, at.date1904), at);
  const text = decimalText(value);
  if (text === null) {
    return Number.isFinite(value)
      ? problem('number_not_exact', `${at.ref} holds the number ${String(value)}: more digits than a spreadsheet number keeps exactly (about 15), so it is not the number that was typed. Type long numbers such as accounts and ids as text (format the column as Text, or start the value with an apostrophe)`)
      : problem('cell_error', `${at.ref} holds a number that is not finite`);
  }
  return { text: at.decimalSeparator === ',' ? text.replace('.', ',') : text };
}

function dateReading(date: Date, at: CellContext): CellReading {
  const text = dateText(date);
  return text === null ? problem('cell_error', `${at.ref} holds a date that is not valid`) : { text };
}

/** A formula's saved result; `result` is exceljs's, NaN when the result is an error value. */
function formulaText(formula: string, result: unknown, at: CellContext): CellReading {
  const shown = formula ? `the formula =${shortFormula(formula)}` : 'a shared formula';
  if (result === undefined || result === null) {
    return problem('formula_without_value', `${at.ref}: ${shown} has no saved value (the program that wrote the file does not calculate formulas): open the file in Excel or LibreOffice and save it again, or type the value`);
  }
  if ((typeof result === 'number' && Number.isNaN(result)) || (typeof result === 'object' && 'error' in result)) {
    const error = typeof result === 'object' ? ` ${String((result as { error: unknown }).error)}` : ' (#DIV/0!, #N/A, #VALUE! or the like)';
    return problem('cell_error', `${at.ref}: ${shown} gives the error${error}: correct the sheet and save it again`);
  }
  return cellText(result, at);
}

/**
 * The text of a cell's value as exceljs's streaming reader gives it: null, a
 * string, a number, a boolean, a Date, rich text, a hyperlink, an error value or
 * a formula. `formulaResult` is the cell's own result where the value leaves it
 * out (exceljs drops an error result from the value).
 */
export function cellText(value: unknown, at: CellContext, formulaResult?: unknown): CellReading {
  if (value === null || value === undefined) return { text: '' };
  if (typeof value === 'string') return { text: value };
  if (typeof value === 'number') return numberText(value, at);
  if (typeof value === 'boolean') return { text: value ? 'TRUE' : 'FALSE' };
  if (value instanceof Date) return dateReading(value, at);
  if (typeof value === 'object') {
    const object = value as Record<string, unknown>;
    if ('formula' in object || 'sharedFormula' in object) {
      const formula = typeof object.formula === 'string' ? object.formula : '';
      return formulaText(formula, 'result' in object ? object.result : formulaResult, at);
    }
    if ('error' in object) return problem('cell_error', `${at.ref} holds the error ${String(object.error)}: correct the sheet and save it again`);
    if (Array.isArray(object.richText)) return { text: (object.richText as { text?: unknown }[]).map((run) => (typeof run.text === 'string' ? run.text : '')).join('') };
    if (typeof object.text === 'string') return { text: object.text };
  }
  return problem('not_a_workbook', `${at.ref} holds a value of a kind this reader does not know`);
}
