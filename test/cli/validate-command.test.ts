import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { BIN, runCli } from '../helpers/cli.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { openWorkspace } from '../../src/workspace/workspace.js';

const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/batch/${name}`, import.meta.url));
const template = (name: string): string => fileURLToPath(new URL(`../../fixtures/templates/${name}`, import.meta.url));

describe('paybatch validate', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'paybatch-validate-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  const noWorkspace = { PAYBATCH_HOME: join(tmp, 'no-workspace') };

  it.each(['gbr-bank.csv', 'eur-iban-bank.csv', 'global-usd-bank.csv', 'nga-bank.csv', 'nga-cash.csv'])('exits 0 for the template %s', async (name) => {
    const result = await runCli(['validate', template(name)], { env: noWorkspace });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/rows, \d+ valid, 0 invalid, 0 warnings/);
  });

  it('exits 1 with a table of every error and the totals of the valid rows', async () => {
    const result = await runCli(['validate', fixture('mixed.csv')], { env: noWorkspace });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/5 rows, 1 valid, 4 invalid, 2 warnings/);
    expect(result.stdout).toMatch(/Warnings \(2\)[\s\S]*\n\s+5\s+sender_external_id\s+sender_details_differ\s+this sender_external_id has other details than on line 3/);
    expect(result.stdout).toMatch(/LINE\s+COLUMN\s+CODE\s+MESSAGE/);
    expect(result.stdout).toMatch(/\n\s+2\s+external_id\s+duplicate_external_id\s+this external_id is also on line 5/);
    expect(result.stdout).toMatch(/\n\s+3\s+recipient_bank_account\s+uk_modulus_check_failed/);
    expect(result.stdout).toMatch(/\n\s+3\s+sender_birth_date\s+invalid_date/);
    expect(result.stdout).toMatch(/\n\s+4\s+output_amount\s+amount_too_precise/);
    expect(result.stdout).toMatch(/GBP\s+7\.50\s+\(750 minor units\)/);
  });

  it('prints the documented JSON with --json', async () => {
    const result = await runCli(['validate', fixture('mixed.csv'), '--json'], { env: noWorkspace });
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ file: fixture('mixed.csv'), rows: 5, valid: 1, invalid: 4, totals: { GBP: '750' }, error_count: 5, warning_count: 2, truncated: false });
    expect(report.warnings.map((w: { line: number; code: string }) => `${w.line}:${w.code}`)).toEqual(['5:sender_details_differ', '6:sender_details_differ']);
    expect(report.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(report.errors.map((e: { line: number; code: string }) => `${e.line}:${e.code}`)).toEqual([
      '2:duplicate_external_id', '3:uk_modulus_check_failed', '3:invalid_date', '4:amount_too_precise', '5:duplicate_external_id',
    ]);
    for (const error of report.errors) expect(Object.keys(error).sort()).toEqual(['code', 'column', 'line', 'message']);
  });

  it('exits 2 when the file cannot be read as a batch, naming the line', async () => {
    const text = await runCli(['validate', fixture('windows-1252.csv')], { env: noWorkspace });
    expect(text.code).toBe(2);
    expect(text.stderr).toMatch(/windows-1252\.csv, line 3: cannot be read as a batch \(not_utf8\)/);
    const json = await runCli(['validate', fixture('field-count.csv'), '--json'], { env: noWorkspace });
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({ file: fixture('field-count.csv'), sha256: expect.stringMatching(/^[0-9a-f]{64}$/), error: { code: 'field_count', line: 3, message: 'line 3: the row has 34 fields, the header has 33' } });
    const missing = await runCli(['validate', join(tmp, 'nope.csv'), '--json'], { env: noWorkspace });
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.stdout)).toMatchObject({ sha256: null, error: { code: 'file_unreadable' } });
  });

  it('reads the column mapping from --config, and from the workspace\'s paybatch.config.json', async () => {
    const mapping = { batch: { column_mapping: { 'Payment Ref': 'external_id', 'beneficiary sort code': 'recipient_sort_code' } } };
    const config = join(tmp, 'mapping.json');
    writeFileSync(config, JSON.stringify(mapping));
    expect((await runCli(['validate', fixture('own-headers.csv')], { env: noWorkspace })).code).toBe(2);
    expect((await runCli(['validate', fixture('own-headers.csv'), '--config', config], { env: noWorkspace })).code).toBe(0);
    const home = join(tmp, 'workspace');
    (await import('node:fs')).mkdirSync(home);
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify(mapping));
    expect((await runCli(['validate', fixture('own-headers.csv'), '--home', home])).code).toBe(0);
    expect((await runCli(['validate', fixture('own-headers.csv')], { env: { PAYBATCH_HOME: home } })).code).toBe(0);
  });

  it('exits 78 on a bad configuration, naming every bad key', async () => {
    const config = join(tmp, 'bad.json');
    writeFileSync(config, JSON.stringify({ batch: { delimiter: '|', max_row_amount: { GBP: '1.234', XYZ: '5' }, column_mapping: { IBAN: 'iban' } }, nonsense: 1 }));
    const result = await runCli(['validate', fixture('valid-lf.csv'), '--config', config]);
    expect(result.code).toBe(78);
    for (const key of ['batch.delimiter', 'batch.max_row_amount.GBP', 'batch.max_row_amount.XYZ', 'batch.column_mapping.IBAN', 'nonsense']) {
      expect(result.stderr).toContain(key);
    }
  });

  it('exits 64 without a file', async () => {
    expect((await runCli(['validate'])).code).toBe(64);
  });
});

describe('paybatch validate on a large file, through a pipe', () => {
  it('writes the whole JSON report before exiting non-zero', async () => {
    const { generateBatch } = await import('../../bench/generate-batch.js');
    const dir = mkdtempSync(join(tmpdir(), 'paybatch-pipe-'));
    try {
      const file = join(dir, 'batch.csv');
      await generateBatch(file, 50_000);
      // A reader that lags, like `| jq` on a busy machine: the pipe fills and the writes queue.
      const shell = `"${process.execPath}" "${BIN}" validate "${file}" --json | (sleep 0.5; cat); exit "\${PIPESTATUS[0]}"`;
      const result = spawnSync('bash', ['-c', shell], { encoding: 'utf8', env: { ...process.env, PAYBATCH_HOME: join(dir, 'none') }, maxBuffer: 64 * 1024 * 1024 });
      expect(result.status).toBe(1);
      expect(result.stdout.length).toBeGreaterThan(65_536);
      const report = JSON.parse(result.stdout);
      expect(report).toMatchObject({ rows: 50_000, invalid: 500, error_count: 500 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('never needs the scratch file for a file of a few thousand rows, even with one sender on every row', async () => {
    const { generateBatch } = await import('../../bench/generate-batch.js');
    const dir = mkdtempSync(join(tmpdir(), 'paybatch-scratch-'));
    try {
      const file = join(dir, 'batch.csv');
      // One sender: its partition of the rules across rows fills a buffer (256 records) again and again.
      await generateBatch(file, 3_000, 1);
      const result = await runCli(['validate', '--json', file], { env: { PAYBATCH_HOME: join(dir, 'none'), TMPDIR: join(dir, 'missing') } });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(1);
      expect(JSON.parse(result.stdout)).toMatchObject({ rows: 3_000, invalid: 30 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Two validations of 30,001 rows each: ten seconds on a quiet machine, more than the default bound beside other work.
  it('keeps the fingerprints in memory when the temporary folder refuses the scratch file: one warning line, the same report', async () => {
    const { generateBatch } = await import('../../bench/generate-batch.js');
    const dir = mkdtempSync(join(tmpdir(), 'paybatch-scratch-'));
    try {
      const file = join(dir, 'batch.csv');
      await generateBatch(file, 30_000);
      // A repeated external_id far apart: found through what was kept in memory.
      appendFileSync(file, `${readFileSync(file, 'utf8').split('\n')[1]}\n`);
      const env = { PAYBATCH_HOME: join(dir, 'none') };
      // The scratch file at once (batch.scratch_after_bytes 0), not after 2 MB of fingerprints.
      const config = join(dir, 'paybatch.config.json');
      writeFileSync(config, JSON.stringify({ batch: { scratch_after_bytes: 0 } }));
      const refused = await runCli(['validate', '--json', '--config', config, file], { env: { ...env, TMPDIR: join(dir, 'missing') } });
      expect(refused.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(/^paybatch: warning: cannot make the scratch file for the rules across rows in .*missing \(the temporary folder; TMPDIR sets another\): ENOENT.*; the fingerprints of its rows are kept in memory instead/),
      ]);
      const onDisk = await runCli(['validate', '--json', '--config', config, file], { env: { ...env, TMPDIR: dir } });
      expect(onDisk.stderr).toBe('');
      expect(refused.code).toBe(1);
      // The same report, but for the time a twin in the file is given (the file's, now: each run its own).
      const timeless = (stdout: string): unknown => {
        const json = JSON.parse(stdout) as { possible_duplicates: { twin: { at?: string } }[] };
        for (const found of json.possible_duplicates) delete found.twin.at;
        return json;
      };
      expect(timeless(refused.stdout)).toEqual(timeless(onDisk.stdout));
      expect(JSON.parse(refused.stdout).errors.filter((e: { code: string }) => e.code === 'duplicate_external_id').map((e: { line: number }) => e.line)).toEqual([2, 30_002]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('without a workspace database, lists a row paying an account the same amount as an earlier line of the file, with that line', async () => {
    const [header, first] = readFileSync(template('eur-iban-bank.csv'), 'utf8').split('\n') as [string, string];
    const dir = mkdtempSync(join(tmpdir(), 'paybatch-validate-twice-'));
    const file = join(dir, 'twice.csv');
    writeFileSync(file, `${header}\n${first}\n${first.replace('EUR-2026-0001', 'EUR-2026-0099')}\n`);
    const noWorkspace = { PAYBATCH_HOME: join(dir, 'no-workspace') };
    const result = await runCli(['validate', file], { env: noWorkspace });
    expect(result.code).toBe(0);
    // The rule's warning stays; the possible-duplicates list names the earlier line too, as preview does.
    expect(result.stdout).toContain('repeated_payout');
    expect(result.stdout).toMatch(/possible duplicate payments: 1 .*\n {2}line 3 {2}EUR-2026-0099 {2}possible duplicate of line 2 of the same file \(external_id EUR-2026-0001, sent first\)/);
    const json = JSON.parse((await runCli(['validate', file, '--json'], { env: noWorkspace })).stdout);
    expect(json.possible_duplicates).toEqual([expect.objectContaining({ line: 3, external_id: 'EUR-2026-0099', twin: expect.objectContaining({ line: 2, external_id: 'EUR-2026-0001', same_file: true }) })]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists a row paying an account the same amount as a row of an earlier batch in the workspace, with that twin (no network call)', async () => {
    const home = mkdtempSync(join(tmpdir(), 'paybatch-validate-twin-'));
    const store = SqliteStore.open(join(openWorkspace(home).database));
    const request = {
      external_id: 'EUR-2025-0009', type: 'bank', input_currency_code: 'EUR', output_currency_code: 'EUR', output_amount_in_cents: '200000',
      sender: { external_id: 'SND-0001' }, recipient: { country_code: 'DEU', iban: 'DE89370400440532013000' },
    };
    const batch = await store.beginBatch({ file_name: 'earlier.csv', sha256: 'e'.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: new Date().toISOString(), file_mtime_ms: 1, send_after: 0 });
    await store.addRows(batch, [{ line: 2, external_id: request.external_id, request, errors: [] }]);
    // As intake's screen does once a batch's rows are all stored: its accounts written where twins are looked for.
    await store.indexRecipients(batch);
    await store.acceptBatch(batch);
    const row = await store.row(batch, 2);
    await store.commitRow(batch, 2, row?.revision as number, { changes: { phase: 'final', state: 'paid', transaction_id: 'tr_9' } });
    await store.close();

    const result = await runCli(['validate', template('eur-iban-bank.csv')], { env: { PAYBATCH_HOME: home } });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`possible duplicate payments: 1 .*\\n  line 2  EUR-2026-0001  possible duplicate of batch ${batch} line 2 \\(external_id EUR-2025-0009, paid, \\d{4}-\\d\\d-\\d\\d\\): held until a person allows it`));
    const json = JSON.parse((await runCli(['validate', template('eur-iban-bank.csv'), '--json'], { env: { PAYBATCH_HOME: home } })).stdout);
    expect(json.possible_duplicates).toEqual([expect.objectContaining({ line: 2, external_id: 'EUR-2026-0001', action: 'hold', twin: expect.objectContaining({ batch_id: batch, external_id: 'EUR-2025-0009' }) })]);
    rmSync(home, { recursive: true, force: true });
  });
});
