/**
 * An .xlsx batch through the built command line, as a user runs it: validate
 * and preview it, then drop it in the inbox and `paybatch run` pays it on the
 * embedded sandbox (no service configured). Needs `npm run build`.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { FAST_ENGINE, FAST_INTAKE } from '../helpers/engine.js';
import { validRow } from '../helpers/rows.js';
import type { CellInput } from '../helpers/xlsx.js';
import { headerOf, sheetOf, writeWorkbook } from '../helpers/xlsx.js';

describe('paybatch with an .xlsx batch', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-xlsx-run-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // Two GBR rows as a spreadsheet holds them: a number cell and a text amount, a date cell and a text date.
  const rows: Record<string, CellInput>[] = [
    { ...validRow('gbr', { external_id: 'XLSX-1' }), output_amount: 1250, sender_birth_date: new Date(Date.UTC(1985, 11, 10)) },
    { ...validRow('gbr', { external_id: 'XLSX-2', recipient_sort_code: '10-79-99', recipient_bank_account: '88837491' }), output_amount: '310.45' },
  ];

  it('validate and preview read it; run pays every row on the embedded sandbox', async () => {
    const file = join(dir, 'payouts.xlsx');
    await writeWorkbook(file, [sheetOf('Payouts', headerOf(rows), rows, 1)]);
    const home = join(dir, 'ws');
    const env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: '', PAYBATCH_API_KEY: '', PAYBATCH_API_SECRET: '', PAYBATCH_API_SECRET_FILE: '' };

    const validate = await runCli(['validate', file], { env });
    expect(validate.code, validate.stderr).toBe(0);
    expect(validate.stdout).toMatch(/payouts\.xlsx: 2 rows, 2 valid, 0 invalid, 0 warnings/);
    expect(validate.stdout).toMatch(/GBP\s+1,560\.45\s+\(156045 minor units\)/);
    const json = JSON.parse((await runCli(['validate', file, '--json'], { env })).stdout);
    expect(json).toMatchObject({ rows: 2, valid: 2, delimiter: null, sheet: 'Payouts', totals: { GBP: '156045' } });

    const preview = await runCli(['preview', file, '--json'], { env });
    expect(preview.code, preview.stderr).toBe(0);
    expect(JSON.parse(preview.stdout)).toMatchObject({ rows: { to_send: 2, invalid: 0 }, totals: { GBP: '156045' } });

    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ intake: FAST_INTAKE, engine: FAST_ENGINE }));
    await writeWorkbook(join(home, 'inbox', 'payouts.xlsx'), [sheetOf('Payouts', headerOf(rows), rows, 1)]);
    writeFileSync(join(home, 'inbox', 'payouts.xlsx.done'), '');
    const run = await runCli(['run', '--wait', '30s'], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/using embedded sandbox/);
    expect(run.stdout).toMatch(/B\d{8}-[0-9a-f]{8} \(payouts\.xlsx\): 2 rows: paid 2; all final/);
    const [results] = readdirSync(join(home, 'outbox')).filter((name) => name.endsWith('.results.csv'));
    const lines = readFileSync(join(home, 'outbox', results as string), 'utf8').trim().split('\n');
    const columns = (lines[0] as string).split(',');
    const paid = lines.slice(1).map((line) => Object.fromEntries(line.split(',').map((value, i) => [columns[i], value])));
    expect(paid.map((row) => [row.line, row.external_id, row.state, row.output_amount_in_cents])).toEqual([
      ['3', 'XLSX-1', 'paid', '125000'],
      ['4', 'XLSX-2', 'paid', '31045'],
    ]);
    expect(readdirSync(join(home, 'inbox'))).toEqual([]);
  }, 60_000);

  it('a spreadsheet with a formula never calculated goes to failed/ with a report naming the cell, nothing sent', async () => {
    const home = join(dir, 'ws-bad');
    const env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: '', PAYBATCH_API_KEY: '', PAYBATCH_API_SECRET: '', PAYBATCH_API_SECRET_FILE: '' };
    expect((await runCli(['run', '--wait', '1s'], { env })).code).toBe(0);
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ intake: FAST_INTAKE, engine: FAST_ENGINE }));
    const bad = [rows[0] as Record<string, CellInput>, { ...rows[1], output_amount: { formula: 'B2/4' } as CellInput }];
    await writeWorkbook(join(home, 'inbox', 'bad.xlsx'), [sheetOf('Payouts', headerOf(bad), bad)]);
    writeFileSync(join(home, 'inbox', 'bad.xlsx.done'), '');
    const run = await runCli(['run', '--wait', '5s'], { env });
    expect(run.code, run.stderr).toBe(0);
    const failed = readdirSync(join(home, 'failed'));
    expect(failed.filter((name) => name.endsWith('--bad.xlsx'))).toHaveLength(1);
    const report = readFileSync(join(home, 'failed', failed.find((name) => name.endsWith('--bad.xlsx.report.txt')) as string), 'utf8');
    expect(report).toMatch(/^bad\.xlsx, line 3: cannot be read as a batch \(formula_without_value\): Payouts!B3: the formula =B2\/4 has no saved value/);
    expect(report).toMatch(/Nothing of it was sent/);
  }, 60_000);
});
