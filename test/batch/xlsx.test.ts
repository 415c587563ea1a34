/**
 * .xlsx batch files, made here with exceljs's writer: the sheet read, the
 * header row, every kind of cell, amounts from number cells exact or refused,
 * dates, formulas, and the sheet, row and column of every error.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readerOptions } from '../../src/batch/batch-options.js';
import { cellText, columnLetters, decimalText, sheetPrefix } from '../../src/batch/cell-values.js';
import { fileSha256 } from '../../src/batch/file-hash.js';
import { openBatch } from '../../src/batch/reader.js';
import type { Corridor } from '../../src/validate/corridors.js';
import { CORRIDORS } from '../../src/validate/corridors.js';
import { companionNames, companionOf, notABatchFile } from '../../src/workspace/arrival.js';
import { RULES, validRow } from '../helpers/rows.js';
import { batchConfig, fileError, validate } from '../helpers/validation.js';
import type { CellInput, SheetInput } from '../helpers/xlsx.js';
import { headerOf, sheetOf, writeWorkbook } from '../helpers/xlsx.js';

const dir = mkdtempSync(join(tmpdir(), 'paybatch-xlsx-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** A 20-digit account typed into a number cell: what the cell keeps is not it. */
const LONG_NUMBER = Number('12345678901234567890');

async function workbook(sheets: SheetInput[], options: { date1904?: boolean } = {}): Promise<string> {
  const file = join(dir, `book-${(files += 1)}.xlsx`);
  await writeWorkbook(file, sheets, options);
  return file;
}

/** A sheet "Payouts" of GBR rows, each row's fields overridden by cell values. */
function payouts(rows: Record<string, CellInput>[], leadingEmptyRows = 0, name = 'Payouts'): SheetInput {
  const full = rows.map((overrides, i) => ({ ...validRow('gbr', { external_id: `X-${i + 1}`, output_amount: `${100 + i}.00` }), ...overrides }));
  return sheetOf(name, headerOf(full), full, leadingEmptyRows);
}

describe('cell values as text (pure)', () => {
  it('writes a number as the shortest decimal that gives it back, never with an exponent; refuses integers past 2^53', () => {
    expect(decimalText(1234.5)).toBe('1234.5');
    expect(decimalText(0.1 + 0.2)).toBe('0.30000000000000004');
    expect(decimalText(1234.565)).toBe('1234.565');
    expect(decimalText(1e-7)).toBe('0.0000001');
    expect(decimalText(1.5e-7)).toBe('0.00000015');
    expect(decimalText(-2.5e-8)).toBe('-0.000000025');
    expect(decimalText(9007199254740991)).toBe('9007199254740991');
    expect(decimalText(9007199254740992)).toBeNull();
    expect(decimalText(1e21)).toBeNull();
    expect(decimalText(Number.NaN)).toBeNull();
  });

  it('reads dates in UTC, rich text, booleans, hyperlinks, formulas and error values', () => {
    const at = { ref: 'Payouts!C7', date1904: false };
    expect(cellText(new Date(Date.UTC(1985, 11, 10)), at)).toEqual({ text: '1985-12-10' });
    expect(cellText(new Date(Date.UTC(1985, 11, 10, 13, 30)), at)).toEqual({ text: '1985-12-10 13:30:00' });
    expect(cellText(31391, { ...at, numFmt: 'dd/mm/yyyy' })).toEqual({ text: '1985-12-10' });
    expect(cellText(29929, { ...at, numFmt: 'yyyy-mm-dd', date1904: true })).toEqual({ text: '1985-12-10' });
    expect(cellText(1234.5, { ...at, numFmt: '"£"#,##0.00' })).toEqual({ text: '1234.5' });
    expect(cellText(1234.5, { ...at, decimalSeparator: ',' })).toEqual({ text: '1234,5' });
    expect(cellText({ richText: [{ text: 'Ada ' }, { text: 'Lovelace', font: { bold: true } }] }, at)).toEqual({ text: 'Ada Lovelace' });
    expect(cellText(true, at)).toEqual({ text: 'TRUE' });
    expect(cellText({ text: 'site', hyperlink: 'https://example.com' }, at)).toEqual({ text: 'site' });
    expect(cellText({ formula: 'B7*2', result: 12.5 }, at)).toEqual({ text: '12.5' });
    expect(cellText({ formula: 'B7*2' }, at)).toMatchObject({ problem: { code: 'formula_without_value', message: expect.stringMatching(/^Payouts!C7: the formula =B7\*2 has no saved value/) } });
    expect(cellText({ formula: '1/0' }, at, Number.NaN)).toMatchObject({ problem: { code: 'cell_error' } });
    expect(cellText({ error: '#N/A' }, at)).toMatchObject({ problem: { code: 'cell_error', message: 'Payouts!C7 holds the error #N/A: correct the sheet and save it again' } });
    expect(cellText(LONG_NUMBER, at)).toMatchObject({ problem: { code: 'number_not_exact' } });
  });

  it('names cells as a formula would', () => {
    expect([1, 26, 27, 52, 703, 16384].map(columnLetters)).toEqual(['A', 'Z', 'AA', 'AZ', 'AAA', 'XFD']);
    expect(sheetPrefix('Payouts')).toBe('Payouts!');
    expect(sheetPrefix('May payouts')).toBe("'May payouts'!");
    expect(sheetPrefix("Ada's")).toBe("'Ada''s'!");
    expect(sheetPrefix('A1')).toBe("'A1'!");
  });
});

describe('reading .xlsx batch files', () => {
  it('reads number and text amounts, as CSV reads text: 1234.5 GBP is 123450 minor units', async () => {
    const file = await workbook([payouts([{ output_amount: 1234.5 }, { output_amount: '310.45' }, { output_amount: 12 }])]);
    const report = await validate(file);
    expect(report).toMatchObject({ rows: 3, valid: 3, invalid: 0, errors: [], warnings: [], delimiter: null, sheet: 'Payouts' });
    expect(report.totals).toEqual({ GBP: String(123450 + 31045 + 1200) });
    expect(report.sha256).toBe(await fileSha256(file));
  });

  it('refuses 0.1+0.2 and 1234.565 in a number cell for GBP (too many decimals, never rounded), saying the value, the decimals and the cell', async () => {
    const file = await workbook([payouts([{ output_amount: 0.1 + 0.2 }, { output_amount: 1234.565 }, { output_amount: 1234.5 }])]);
    const report = await validate(file);
    expect(report).toMatchObject({ rows: 3, valid: 1, invalid: 2 });
    expect(report.totals).toEqual({ GBP: '123450' });
    const column = columnLetters(headerOf([validRow('gbr')]).indexOf('output_amount') + 1);
    expect(report.errors).toEqual([
      { line: 2, column: 'output_amount', code: 'amount_too_precise', cell: `Payouts!${column}2`, message: `Payouts!${column}2: output_amount: 0.30000000000000004 has 17 decimal places; the currency has 2; refused, never rounded: round it in the sheet (=ROUND) or type the amount as text` },
      { line: 3, column: 'output_amount', code: 'amount_too_precise', cell: `Payouts!${column}3`, message: expect.stringMatching(/^Payouts!\w+3: output_amount: 1234\.565 has 3 decimal places; the currency has 2; refused, never rounded/) },
    ]);
  });

  it('takes whole units for a currency without decimals (JPY) and refuses a fraction of one', async () => {
    const jpy: Corridor = { id: 'jpn-bank', name: 'Japan (test)', countries: ['JPN'], type: 'bank', input_currencies: ['USD'], output_currencies: ['JPY'], required: [], checks: [] };
    const rules = { ...RULES, corridors: [...CORRIDORS, jpy] };
    const row = (id: string, amount: CellInput): Record<string, CellInput> => ({
      ...validRow('gbr', { external_id: id }), output_currency_code: 'JPY', recipient_country_code: 'JPN', recipient_type: 'business', recipient_phone_number: undefined, output_amount: amount,
    });
    const rows = [row('J-1', 1500), row('J-2', 1500.5), row('J-3', '2500')];
    const file = await workbook([sheetOf('Payouts', headerOf(rows), rows)]);
    const report = await validate(file, {}, rules);
    expect(report.totals).toEqual({ JPY: '4000' });
    expect(report.errors).toEqual([expect.objectContaining({ line: 3, code: 'amount_too_precise', message: expect.stringContaining('1500.5 has 1 decimal places; the currency has 0') })]);
  });

  it('reads minor units from a number cell, and refuses a fraction there', async () => {
    const rows = [0, 1].map((i) => {
      const { output_amount: _drop, ...row } = validRow('gbr', { external_id: `M-${i}` });
      return { ...row, output_amount_in_cents: i === 0 ? 123456 : 1234.5 } as Record<string, CellInput>;
    });
    const report = await validate(await workbook([sheetOf('Payouts', headerOf(rows), rows)]));
    expect(report.totals).toEqual({ GBP: '123456' });
    expect(report.errors).toEqual([expect.objectContaining({ line: 3, column: 'output_amount_in_cents', code: 'amount_invalid' })]);
  });

  it('reads dates as date cells (also in a 1904 workbook) or as text; a date with a time of day is refused', async () => {
    const rows = [
      { sender_birth_date: new Date(Date.UTC(1985, 11, 10)), sender_identification_type: 'passport', sender_identification_number: 'P1', sender_identification_expiry: new Date(Date.UTC(2031, 4, 1)) },
      { sender_birth_date: '1985-12-10' },
      { sender_birth_date: new Date(Date.UTC(1985, 11, 10, 9, 30)) },
    ];
    const report = await validate(await workbook([payouts(rows)]));
    expect(report).toMatchObject({ rows: 3, valid: 2 });
    expect(report.errors).toEqual([expect.objectContaining({ line: 4, column: 'sender_birth_date', code: 'invalid_date' })]);
    const old = await validate(await workbook([payouts([{ sender_birth_date: new Date(Date.UTC(1985, 11, 10)) }])], { date1904: true }));
    expect(old).toMatchObject({ valid: 1, errors: [] });
  });

  it('uses a formula\'s saved result (an amount, a date, text), and reads rich text, shared strings, booleans and hyperlinks', async () => {
    const file = await workbook([payouts([{
      output_amount: { formula: '1000+250', result: 1250 } as CellInput,
      sender_birth_date: { formula: 'DATE(1985,12,10)', result: new Date(Date.UTC(1985, 11, 10)) } as CellInput,
      recipient_last_name: { formula: '"Tur"&"ing"', result: 'Turing' } as CellInput,
      recipient_first_name: { richText: [{ text: 'Al', font: { bold: true } }, { text: 'an' }] },
      sender_email: { text: 'ada@example.com', hyperlink: 'mailto:ada@example.com' },
    }])]);
    const opened = await openBatch(file, readerOptions(batchConfig()));
    const rows = [];
    for await (const row of opened.rows) rows.push(row);
    expect(rows[0]?.fields).toMatchObject({ output_amount: '1250', sender_birth_date: '1985-12-10', recipient_last_name: 'Turing', recipient_first_name: 'Alan', sender_email: 'ada@example.com' });
    expect((await validate(file)).valid).toBe(1);
  });

  it('refuses a formula without a saved value and an error value, naming the cell (a file-level error: the sheet was not calculated)', async () => {
    const file = await workbook([payouts([{}, { output_amount: { formula: 'B2*2' } as CellInput }])]);
    const error = await fileError(file);
    const column = columnLetters(headerOf([validRow('gbr')]).indexOf('output_amount') + 1);
    expect(error).toMatchObject({ code: 'formula_without_value', line: 3, cell: `Payouts!${column}3` });
    expect(error.message).toMatch(new RegExp(`^Payouts!${column}3: the formula =B2\\*2 has no saved value .*save it again`));
    const na = await fileError(await workbook([payouts([{ recipient_city: { error: '#N/A' } as CellInput }])]));
    expect(na).toMatchObject({ code: 'cell_error', line: 2, message: expect.stringContaining('holds the error #N/A') });
  });

  it('refuses a long number typed as a number (an account past 2^53 is no longer the one typed)', async () => {
    const error = await fileError(await workbook([payouts([{ recipient_bank_account: LONG_NUMBER }])]));
    expect(error).toMatchObject({ code: 'number_not_exact', line: 2, message: expect.stringMatching(/type long numbers .* as text/i) });
  });

  it('takes the header from the first non-empty row, skips empty rows, ignores cells right of the header, and names rows by their number in the sheet', async () => {
    const sheet = payouts([{}, {}], 2);
    sheet.rows.splice(4, 0, [null, '  ', null]); // an empty-looking row between the two rows
    (sheet.rows[3] as CellInput[])[60] = 'a note right of the header';
    const report = await validate(await workbook([sheet]));
    expect(report).toMatchObject({ rows: 2, valid: 2, errors: [], warnings: [] });
    const opened = await openBatch(await workbook([sheet]), readerOptions(batchConfig()));
    const lines = [];
    for await (const row of opened.rows) lines.push(row.line);
    expect(lines).toEqual([4, 6]);
  });

  it('gives every error and warning its sheet, row and column: Payouts!C7, quoted sheet names, whole rows for missing columns, duplicates', async () => {
    const rows = [{}, { recipient_sort_code: '12-34' }, { external_id: 'X-1' }].map((overrides, i) => ({ ...validRow('gbr', { external_id: `X-${i + 1}`, output_amount: `${100 + i}.00` }), ...overrides }));
    const header = [...headerOf(rows), 'Remarks'];
    const file = await workbook([{ ...sheetOf('May payouts', header, rows, 2), name: 'May payouts' }]);
    const report = await validate(file);
    const letter = (column: string): string => columnLetters(header.indexOf(column) + 1);
    expect(report.warnings).toEqual([{ line: 3, column: 'Remarks', code: 'unknown_column', cell: `'May payouts'!${letter('Remarks')}3`, message: expect.stringMatching(/^'May payouts'!\w+3: column "Remarks" is not a batch column/) }]);
    expect(report.errors).toEqual(expect.arrayContaining([
      expect.objectContaining({ line: 5, column: 'recipient_sort_code', code: 'sort_code_invalid', cell: `'May payouts'!${letter('recipient_sort_code')}5` }),
      expect.objectContaining({ line: 4, column: 'external_id', code: 'duplicate_external_id', cell: `'May payouts'!${letter('external_id')}4` }),
      expect.objectContaining({ line: 6, column: 'external_id', code: 'duplicate_external_id', cell: `'May payouts'!${letter('external_id')}6` }),
    ]));
    const gbrOnly = validRow('gbr');
    const noIban = { ...validRow('eur'), recipient_iban: undefined } as Record<string, CellInput>;
    const eur = await validate(await workbook([sheetOf('Payouts', headerOf([gbrOnly]), [noIban])]));
    expect(eur.errors).toContainEqual(expect.objectContaining({ column: 'recipient_iban', code: 'required_for_corridor', cell: 'Payouts!2:2', message: expect.stringMatching(/^Payouts!2:2: /) }));
  });

  it('reads the first visible sheet, or the one batch.sheet names; says which sheets there are when it is missing', async () => {
    const file = await workbook([
      { name: 'Lists', rows: [['not', 'a', 'batch']], state: 'hidden' },
      payouts([{}], 0, 'Payouts'),
      payouts([{}, {}], 0, 'Corrections'),
    ]);
    expect(await validate(file)).toMatchObject({ sheet: 'Payouts', rows: 1 });
    expect(await validate(file, { sheet: 'Corrections' })).toMatchObject({ sheet: 'Corrections', rows: 2, valid: 2 });
    const missing = await fileError(file, { sheet: 'June' });
    expect(missing).toMatchObject({ code: 'sheet_not_found', line: null });
    expect(missing.message).toBe('the workbook has no sheet named "June" (batch.sheet): its sheets are "Lists", "Payouts", "Corrections"');
  });

  it('a "Read me" sheet first, with no payout header: the error names the sheets found and batch.sheet', async () => {
    const file = await workbook([
      { name: 'Read me', rows: [['How to fill in this workbook: one payout a row on the Payouts sheet.'], ['Amounts in major units.']] },
      payouts([{}], 0, 'Payouts'),
    ]);
    const error = await fileError(file);
    expect(error).toMatchObject({ code: 'missing_columns', line: 1 });
    expect(error.message).toMatch(/^'Read me'!1:1 \(the header row\): the header lacks required columns: /);
    expect(error.message).toMatch(/\. Sheet "Read me" was read, the first visible one; the workbook's sheets are "Read me", "Payouts": name the sheet with the payouts in batch\.sheet \(e\.g\. "batch": \{"sheet": "Payouts"\}\)$/);
    expect(await validate(file, { sheet: 'Payouts' })).toMatchObject({ sheet: 'Payouts', valid: 1 });
  });

  it('finds the workbook part stored last, every time (exceljs issue #3064: with many small sheets, most reads lost it)', async () => {
    const notes = Array.from({ length: 19 }, (_, i): SheetInput => ({ name: `Notes ${i + 1}`, rows: [[`note ${i + 1}`, i]] }));
    const file = await workbook([payouts([{}]), ...notes]);
    const failures: string[] = [];
    for (let i = 0; i < 30; i++) {
      try {
        expect(await validate(file)).toMatchObject({ sheet: 'Payouts', valid: 1 });
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
    expect(failures).toEqual([]);
  });

  it('refuses an empty sheet, a header without rows, and missing columns, each naming the sheet', async () => {
    const empty = await fileError(await workbook([{ name: 'Payouts', rows: [] }, payouts([{}], 0, 'Other')]));
    expect(empty).toMatchObject({ code: 'empty_sheet', message: 'the first sheet, "Payouts", is empty: the header row and the rows go there (or name another sheet with batch.sheet)' });
    const configured = await fileError(await workbook([payouts([{}]), { name: 'Blank', rows: [[null, '', null]] }]), { sheet: 'Blank' });
    expect(configured).toMatchObject({ code: 'empty_sheet', message: 'sheet "Blank" (batch.sheet) is empty: the header row and the rows go there' });
    const headerOnly = await fileError(await workbook([sheetOf('Payouts', headerOf([validRow('gbr')]), [], 1)]));
    expect(headerOnly).toMatchObject({ code: 'no_rows', line: 2, message: 'Payouts!2:2: the sheet has a header (row 2) but no rows' });
    const missing = await fileError(await workbook([sheetOf('Payouts', ['external_id', 'type'], [{ external_id: 'A', type: 'bank' }], 3)]));
    expect(missing).toMatchObject({ code: 'missing_columns', line: 4, cell: 'Payouts!4:4', message: expect.stringMatching(/^Payouts!4:4 \(the header row\): the header lacks required columns: input_currency_code/) });
  });

  it('points a decimal comma to batch.decimal_separator, and with it set reads text and number cells alike', async () => {
    const file = await workbook([payouts([{ output_amount: '1234,56' }, { output_amount: 99.5 }])]);
    const dot = await validate(file);
    expect(dot.errors).toEqual([expect.objectContaining({ line: 2, code: 'amount_invalid', message: expect.stringContaining('set batch.decimal_separator to "," in the configuration') })]);
    const comma = await validate(file, { decimal_separator: ',' }, { ...RULES, decimalSeparator: ',' });
    expect(comma).toMatchObject({ valid: 2, errors: [] });
    expect(comma.totals).toEqual({ GBP: String(123456 + 9950) });
  });

  it('leaves no temporary file or open file behind, whether the sheet is read to the end or given up part way (the daemon reads many)', async () => {
    const spool = mkdtempSync(join(dir, 'spool-'));
    const notes = (n: number): SheetInput => ({ name: `Notes ${n}`, rows: [['a note']] });
    const good = await workbook([{ name: 'Lists', rows: [['a']], state: 'hidden' }, payouts([{}, {}, {}]), notes(1), notes(2)]);
    const broken = await workbook([payouts([{}, { output_amount: { formula: 'B2*2' } as CellInput }, {}]), notes(1), notes(2)]);
    const headerless = await workbook([{ name: 'Payouts', rows: [['external_id', 'type']] }, notes(1), notes(2)]);
    const openFiles = (): number => readdirSync('/proc/self/fd').length;
    const before = openFiles();
    const tmpdirBefore = process.env.TMPDIR;
    process.env.TMPDIR = spool; // where exceljs sets sheets aside
    try {
      for (let i = 0; i < 10; i++) {
        expect(await validate(good)).toMatchObject({ rows: 3, valid: 3 });
        expect(await fileError(broken)).toMatchObject({ code: 'formula_without_value' });
        expect(await fileError(headerless)).toMatchObject({ code: 'missing_columns' });
      }
      await new Promise((resolve) => setTimeout(resolve, 100)); // closes finishing in the background
    } finally {
      if (tmpdirBefore === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpdirBefore;
    }
    expect(readdirSync(spool)).toEqual([]);
    expect(openFiles()).toBeLessThanOrEqual(before);
  });

  it('refuses what is not an .xlsx workbook, or is cut short, with a file-level error', async () => {
    const text = join(dir, 'text.xlsx');
    writeFileSync(text, 'external_id,type\nA,bank\n');
    expect(await fileError(text)).toMatchObject({ code: 'not_a_workbook', message: 'the file is not an .xlsx workbook (a zip archive): it looks like text; a CSV file must be named .csv' });
    const whole = readFileSync(await workbook([payouts([{}])]));
    const cut = join(dir, 'cut.xlsx');
    writeFileSync(cut, whole.subarray(0, Math.floor(whole.length * 0.6)));
    expect(await fileError(cut)).toMatchObject({ code: 'not_a_workbook', message: expect.stringContaining('cut short') });
    const empty = join(dir, 'empty.xlsx');
    writeFileSync(empty, '');
    expect(await fileError(empty)).toMatchObject({ code: 'empty_file' });
  });
});

describe('the inbox takes .xlsx files', () => {
  it('as batch files, with their markers and manifests; a .xlsx.part is still being written', () => {
    expect(notABatchFile('payouts.xlsx')).toBeNull();
    expect(notABatchFile('Payouts.XLSX')).toBeNull();
    expect(notABatchFile('payouts.xlsx.part')).toMatch(/still being written \(taken once renamed to payouts\.xlsx\)/);
    expect(notABatchFile('payouts.xls')).toBe('not a .csv, .xlsx or .xml (pain.001) file');
    expect(notABatchFile('payouts.xlsx.done')).toMatch(/completion marker/);
    expect(companionOf('payouts.xlsx.done')).toBe('payouts.xlsx');
    expect(companionOf('payouts.xlsx.manifest.json')).toBe('payouts.xlsx');
    expect(companionOf('payouts.csv.done')).toBe('payouts.csv');
    expect(companionNames('payouts.xlsx')).toEqual({ markers: ['payouts.xlsx.done', 'payouts.done'], manifests: ['payouts.xlsx.manifest.json', 'payouts.manifest.json'] });
  });
});
