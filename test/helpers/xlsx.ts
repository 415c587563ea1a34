/** Builds .xlsx batch files for tests with exceljs's own writers, as a spreadsheet program would save them. */
import ExcelJS from 'exceljs';
import type { RowFields } from '../../src/validate/fields.js';

export type CellInput = ExcelJS.CellValue;

export interface SheetInput {
  name: string;
  /** Rows from row 1; null leaves a row empty. */
  rows: (CellInput[] | null)[];
  state?: 'visible' | 'hidden';
  /** Number formats by cell address, e.g. { J3: 'yyyy-mm-dd' }. */
  formats?: Record<string, string>;
}

/** Writes a workbook (shared strings, styles, cached formula results: as Excel saves one). */
export async function writeWorkbook(file: string, sheets: SheetInput[], options: { date1904?: boolean } = {}): Promise<void> {
  const workbook = new ExcelJS.Workbook();
  if (options.date1904) workbook.properties.date1904 = true;
  for (const input of sheets) {
    const sheet = workbook.addWorksheet(input.name, { state: input.state ?? 'visible' });
    input.rows.forEach((row, index) => {
      if (row) sheet.getRow(index + 1).values = row;
    });
    for (const [address, format] of Object.entries(input.formats ?? {})) sheet.getCell(address).numFmt = format;
  }
  await workbook.xlsx.writeFile(file);
}

/** One sheet of a header and rows, the rows given as batch fields (with any cell values in place of text). */
export function sheetOf(name: string, header: readonly string[], rows: readonly Record<string, CellInput>[], leadingEmptyRows = 0): SheetInput {
  return {
    name,
    rows: [...Array.from({ length: leadingEmptyRows }, () => null), [...header], ...rows.map((row) => header.map((column) => row[column] ?? null))],
  };
}

/** The columns of a batch file with these rows: every field any row has, in a stable order. */
export function headerOf(rows: readonly (RowFields | Record<string, CellInput>)[]): string[] {
  return [...new Set(rows.flatMap((row) => Object.keys(row)))];
}
