import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { sheetValue } from '../../src/reports/cells.js';
import { neutralise, RESULT_COLUMNS, resultCells, resultRecord, resultState, writeResults } from '../../src/reports/results.js';
import type { ResultRow } from '../../src/store/port.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import type { ReadCell, ReadSheet } from '../helpers/workbook.js';
import { csvTextOf, readWorkbook } from '../helpers/workbook.js';

describe('result files', () => {
  it('neutralises text a spreadsheet would run as a formula, but not numbers or E.164 phones', () => {
    expect(neutralise('=HYPERLINK("http://x","y")')).toBe('\'=HYPERLINK("http://x","y")');
    expect(neutralise('+SUM(A1:A9)')).toBe("'+SUM(A1:A9)");
    expect(neutralise('-2+3')).toBe("'-2+3");
    expect(neutralise('@cmd')).toBe("'@cmd");
    expect(neutralise('\tx')).toBe("'\tx");
    expect(neutralise('-12.50')).toBe('-12.50');
    expect(neutralise('+2348031234567')).toBe('+2348031234567');
    expect(neutralise('Ada Lovelace')).toBe('Ada Lovelace');
  });

  it('names the state a person reads: the service\'s, or what paybatch decided', () => {
    const row = (fields: Partial<ResultRow>): ResultRow => ({
      line: 2, external_id: 'E', transaction_id: null, phase: 'final', outcome: null, outcome_detail: null, state: null, state_reason: null, state_reason_code: null,
      input_amount: null, input_currency: null, output_amount: null, output_currency: null, funded_at: null, errors: null, recipient_name: null, settled_at: null, original_batch: null, original_line: null, ...fields,
    });
    expect(resultState(row({ phase: 'invalid' }))).toBe('invalid');
    expect(resultState(row({ phase: 'not_sent', outcome: 'insufficient_funds' }))).toBe('insufficient_funds');
    expect(resultState(row({ phase: 'refused', outcome: 'external_id_already_used' }))).toBe('external_id_already_used');
    expect(resultState(row({ phase: 'final', outcome: 'rejected_by_service' }))).toBe('rejected_by_service');
    expect(resultState(row({ phase: 'funded', state: 'manual' }))).toBe('manual');
  });
});

describe('result files for an accountant: major units, names, final times, corrections; CSV and xlsx', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-results-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const base: ResultRow = {
    line: 2, external_id: 'GBR-1', transaction_id: 'tr_1', phase: 'final', outcome: null, outcome_detail: null, state: 'paid', state_reason: null, state_reason_code: null,
    input_amount: '125005', input_currency: 'USD', output_amount: '98904', output_currency: 'GBP', funded_at: '2026-03-02T09:00:01.000Z', errors: null,
    recipient_name: 'Alan Turing', settled_at: '2026-03-02T09:30:15.250Z', original_batch: null, original_line: null,
  };
  const rows: ResultRow[] = [
    base,
    // A correction of line 7 of an earlier batch, paid in a 0-decimal and a 3-decimal currency (the formatter's rule; no corridor has them today).
    { ...base, line: 3, external_id: 'GBR-1-c1', transaction_id: 'tr_2', input_amount: '1250005', input_currency: 'BHD', output_amount: '125000', output_currency: 'JPY', original_batch: 'B20260301-0badcafe', original_line: 7 },
    // An invalid row: no amounts sent, formula text in what the file said.
    {
      ...base, line: 4, external_id: '=HYPERLINK("http://x","y")', transaction_id: null, phase: 'invalid', state: null, input_amount: null, input_currency: null, output_amount: null, output_currency: null,
      funded_at: null, recipient_name: '@SUM(1+1)', settled_at: null, errors: JSON.stringify([{ column: 'recipient_iban', code: 'iban_invalid', message: '-1+2 is not an IBAN' }]),
      invalid_fields: JSON.stringify({ output_amount: '250.5', output_currency_code: 'GBP' }), batch_time: '2026-03-02T09:00:00.000Z',
    },
    // Beyond Excel's 15 digits: exact text.
    { ...base, line: 5, external_id: 'BIG-1', input_amount: '999999999999999999', output_amount: '999999999999999999', output_currency: 'USD' },
    // An invalid row as intake keeps it: no name, no amounts sent; its fields as read give them, its batch a time.
    {
      ...base, line: 6, external_id: 'BAD-2', transaction_id: null, phase: 'invalid', state: null, input_amount: null, input_currency: null, output_amount: null, output_currency: null,
      funded_at: null, recipient_name: null, settled_at: null, errors: JSON.stringify([{ column: 'output_amount', code: 'amount_too_precise', message: '12.345 has 3 decimal places; the currency has 2' }]),
      invalid_fields: JSON.stringify({ output_amount: '12.345', output_currency_code: 'EUR', recipient_first_name: 'Grace', recipient_last_name: 'Hopper' }), batch_time: '2026-03-02T09:00:00.000Z',
    },
    // A row of a rejected batch: its request was kept, so its amount and name are its own; the time is the rejection's.
    { ...base, line: 7, external_id: 'REJ-1', transaction_id: null, phase: 'not_sent', outcome: 'approval_rejected', state: null, input_amount: null, input_currency: 'USD', funded_at: null, settled_at: null, batch_time: '2026-03-02T10:00:00.000Z' },
  ];

  it('leads with what a person reads (who, how much in major units, state, reason, when); minor units stay for machines', async () => {
    const workspace = openWorkspace(join(dir, 'csv'));
    const file = await writeResults(workspace.home, workspace.folders.outbox, 'B1', rows);
    const [header, ...records] = parse(readFileSync(file)) as string[][];
    expect(header?.join(',')).toBe('external_id,recipient_name,output_amount,output_currency,state,state_reason,final_at,line,transaction_id,state_reason_code,input_amount,input_currency,output_amount_in_cents,input_amount_in_cents,error,corrects,next_step');
    expect(header).toEqual([...RESULT_COLUMNS]);
    const byName = records.map((r) => Object.fromEntries((header as string[]).map((h, i) => [h, r[i]])));
    expect(byName[0]).toMatchObject({ input_amount_in_cents: '125005', output_amount_in_cents: '98904', output_amount: '989.04', input_amount: '1250.05', recipient_name: 'Alan Turing', final_at: '2026-03-02T09:30:15.250Z', corrects: '' });
    expect(byName[1]).toMatchObject({ output_amount: '125000', input_amount: '1250.005', corrects: 'B20260301-0badcafe:7' });
    expect(byName[2]).toMatchObject({ state: 'invalid', external_id: '\'=HYPERLINK("http://x","y")', recipient_name: "'@SUM(1+1)", output_amount: '250.50', output_currency: 'GBP', output_amount_in_cents: '', input_amount: '', final_at: '2026-03-02T09:00:00.000Z', error: 'recipient_iban: iban_invalid: -1+2 is not an IBAN' });
    expect(byName[3]).toMatchObject({ output_amount: '9999999999999999.99', input_amount: '9999999999999999.99' });
    expect(byName[4]).toMatchObject({ external_id: 'BAD-2', recipient_name: 'Grace Hopper', output_amount: '12.345', output_currency: 'EUR', state: 'invalid', final_at: '2026-03-02T09:00:00.000Z' });
    // The next step, last, by where the row stands; the batch named in its commands.
    expect(byName[4]?.next_step).toBe('Never sent (invalid): fix the cause, then pay it through corrections (paybatch corrections B1).');
    expect(byName[5]?.next_step).toMatch(/^Never sent \(approval_rejected\)/);
    expect(byName[5]).toMatchObject({ external_id: 'REJ-1', recipient_name: 'Alan Turing', output_amount: '989.04', output_currency: 'GBP', state: 'approval_rejected', final_at: '2026-03-02T10:00:00.000Z' });
    expect(byName[0]?.final_at).toBe('2026-03-02T09:30:15.250Z');
    expect(existsSync(join(workspace.folders.outbox, 'B1.results.xlsx'))).toBe(false);
    // A decimal comma for spreadsheets in the locales that need it (the console's download).
    const record = resultRecord(base, { decimalComma: true });
    expect([record[RESULT_COLUMNS.indexOf('output_amount')], record[RESULT_COLUMNS.indexOf('input_amount')]]).toEqual(['989,04', '1250,05']);
  });

  it('writes the same rows to BATCH.results.xlsx: typed cells, amount formats, bold frozen header, formulas neutralised', async () => {
    const workspace = openWorkspace(join(dir, 'xlsx'));
    await writeResults(workspace.home, workspace.folders.outbox, 'B1', rows, { xlsx: true });
    const sheets = await readWorkbook(join(workspace.folders.outbox, 'B1.results.xlsx'));
    expect([...sheets.keys()]).toEqual(['results']);
    const sheet = sheets.get('results') as ReadSheet;
    expect(sheet.frozenRows).toBe(1);
    expect(sheet.rows[0]?.map((c) => c.value)).toEqual([...RESULT_COLUMNS]);
    expect(sheet.rows[0]?.every((c) => c.bold && c.kind === 'text')).toBe(true);
    expect(sheet.widths.every((w) => typeof w === 'number' && w >= 12)).toBe(true);
    expect(sheet.rows).toHaveLength(rows.length + 1);
    // Cell by cell: what was read back is what was written.
    rows.forEach((row, r) => resultCells(row, 'B1').forEach((cell, c) => {
      const read = sheet.rows[r + 1]?.[c] as ReadCell;
      const written = sheetValue(cell);
      const where = `row ${r + 2}, ${RESULT_COLUMNS[c]}`;
      if (written === null) return expect(read.kind, where).toBe('empty');
      expect(read.value, where).toEqual(written.value);
      expect(read.numFmt, where).toBe(written.numFmt);
      expect(read.kind, where).toBe(written.value instanceof Date ? 'date' : typeof written.value === 'number' ? 'number' : 'text');
    }));
    const first = Object.fromEntries(RESULT_COLUMNS.map((name, c) => [name, sheet.rows[1]?.[c] as ReadCell]));
    expect(first.output_amount).toMatchObject({ kind: 'number', value: 989.04, numFmt: '#,##0.00' });
    expect(first.input_amount).toMatchObject({ kind: 'number', value: 1250.05, numFmt: '#,##0.00' });
    expect(first.input_amount_in_cents).toMatchObject({ kind: 'number', value: 125005, numFmt: '0' });
    expect(first.line).toMatchObject({ kind: 'number', value: 2 });
    expect(first.final_at).toMatchObject({ kind: 'date', value: new Date('2026-03-02T09:30:15.250Z'), numFmt: 'yyyy-mm-dd hh:mm:ss' });
    expect(first.external_id).toMatchObject({ kind: 'text', value: 'GBR-1' });
    const correction = Object.fromEntries(RESULT_COLUMNS.map((name, c) => [name, sheet.rows[2]?.[c] as ReadCell]));
    expect(correction.output_amount).toMatchObject({ value: 125000, numFmt: '#,##0' });
    expect(correction.input_amount).toMatchObject({ value: 1250.005, numFmt: '#,##0.000' });
    expect(correction.corrects).toMatchObject({ kind: 'text', value: 'B20260301-0badcafe:7' });
    const invalid = Object.fromEntries(RESULT_COLUMNS.map((name, c) => [name, sheet.rows[3]?.[c] as ReadCell]));
    expect(invalid.external_id).toMatchObject({ kind: 'text', value: '\'=HYPERLINK("http://x","y")' });
    expect(invalid.recipient_name).toMatchObject({ kind: 'text', value: "'@SUM(1+1)" });
    expect(sheet.rows.flat().some((c) => c.kind === 'formula')).toBe(false);
    const big = Object.fromEntries(RESULT_COLUMNS.map((name, c) => [name, sheet.rows[4]?.[c] as ReadCell]));
    expect(big.input_amount_in_cents).toMatchObject({ kind: 'text', value: '999999999999999999' });
    expect(big.input_amount).toMatchObject({ kind: 'text', value: '9999999999999999.99' });
    // The CSV beside it, from the same pass, says the same.
    const csv = parse(readFileSync(join(workspace.folders.outbox, 'B1.results.csv'))) as string[][];
    expect(sheet.rows.map((cells) => cells.map(csvTextOf))).toEqual(csv);
  });

  it('leaves no file behind when the rows cannot be read to the end', async () => {
    const workspace = openWorkspace(join(dir, 'broken'));
    async function* failing(): AsyncIterable<ResultRow> {
      yield base;
      throw new Error('the database went away');
    }
    await expect(writeResults(workspace.home, workspace.folders.outbox, 'B1', failing(), { xlsx: true })).rejects.toThrow(/went away/);
    expect(readdirSync(workspace.folders.outbox)).toEqual([]);
  });

  it('streams rows to the workbook as they come, pausing for the compression to keep up', async () => {
    const workspace = openWorkspace(join(dir, 'many'));
    async function* many(): AsyncIterable<ResultRow> {
      for (let line = 2; line < 3_002; line++) yield { ...base, line, external_id: `ROW-${line}`, transaction_id: `tr_${line}` };
    }
    await writeResults(workspace.home, workspace.folders.outbox, 'B1', many(), { xlsx: true });
    const sheet = (await readWorkbook(join(workspace.folders.outbox, 'B1.results.xlsx'))).get('results') as ReadSheet;
    expect(sheet.rows).toHaveLength(3_001);
    const last = sheet.rows[3_000];
    expect([last?.[RESULT_COLUMNS.indexOf('line')]?.value, last?.[RESULT_COLUMNS.indexOf('external_id')]?.value]).toEqual([3_001, 'ROW-3001']);
  });
});
