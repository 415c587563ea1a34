/** Opens a workbook paybatch wrote with exceljs's reader, and says what each cell holds, for comparisons cell by cell. */
import ExcelJS from 'exceljs';

export interface ReadCell {
  kind: 'empty' | 'number' | 'text' | 'date' | 'formula' | 'other';
  value: number | string | Date | null;
  numFmt: string | null;
  bold: boolean;
}

export interface ReadSheet {
  name: string;
  /** Frozen panes: rows above the split. */
  frozenRows: number | null;
  widths: (number | undefined)[];
  /** Every row, the header first, each as wide as the header. */
  rows: ReadCell[][];
}

function readCell(cell: ExcelJS.Cell): ReadCell {
  const numFmt = cell.numFmt && cell.numFmt !== 'General' ? cell.numFmt : null;
  const bold = cell.font?.bold === true;
  switch (cell.type) {
    case ExcelJS.ValueType.Null: return { kind: 'empty', value: null, numFmt, bold };
    case ExcelJS.ValueType.Number: return { kind: 'number', value: cell.value as number, numFmt, bold };
    case ExcelJS.ValueType.String:
    case ExcelJS.ValueType.SharedString: return { kind: 'text', value: cell.value as string, numFmt, bold };
    case ExcelJS.ValueType.Date: return { kind: 'date', value: cell.value as Date, numFmt, bold };
    case ExcelJS.ValueType.Formula: return { kind: 'formula', value: String(cell.formula), numFmt, bold };
    default: return { kind: 'other', value: String(cell.value), numFmt, bold };
  }
}

export async function readWorkbook(path: string): Promise<Map<string, ReadSheet>> {
  const book = new ExcelJS.Workbook();
  await book.xlsx.readFile(path);
  const sheets = new Map<string, ReadSheet>();
  for (const sheet of book.worksheets) {
    const width = sheet.getRow(1).cellCount;
    const rows: ReadCell[][] = [];
    for (let r = 1; r <= sheet.rowCount; r++) {
      const row = sheet.getRow(r);
      rows.push(Array.from({ length: width }, (_, c) => readCell(row.getCell(c + 1))));
    }
    const view = sheet.views[0];
    sheets.set(sheet.name, {
      name: sheet.name,
      frozenRows: view?.state === 'frozen' ? (view.ySplit ?? 0) : null,
      widths: Array.from({ length: width }, (_, c) => sheet.getColumn(c + 1).width),
      rows,
    });
  }
  return sheets;
}

/**
 * The text the CSV file holds for the same cell: amounts with their format's
 * decimals, integers as digits, times as ISO 8601. A test's way of saying "the
 * workbook says what the CSV says"; paybatch never formats through a float.
 */
export function csvTextOf(cell: ReadCell): string {
  if (cell.kind === 'empty') return '';
  if (cell.kind === 'date') return (cell.value as Date).toISOString();
  if (cell.kind === 'number') {
    const decimals = /0\.(0+)$/.exec(cell.numFmt ?? '')?.[1]?.length ?? 0;
    return (cell.value as number).toFixed(decimals);
  }
  return String(cell.value);
}
