/**
 * A scripted two-day scenario on a manual clock, reconciled day by day: the
 * report's totals must equal figures computed by hand, to the cent.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PayoutClient } from '../../src/api/client.js';
import { ManualClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import type { Config } from '../../src/config/config.js';
import { cancelRows } from '../../src/engine/cancel.js';
import { writeReconciliation } from '../../src/engine/reconcile-report.js';
import { renderCsv } from '../../src/reports/reconciliation-render.js';
import type { ReportRequest } from '../../src/engine/reconcile-report.js';
import { runOnce } from '../../src/engine/run.js';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Workspace } from '../../src/workspace/workspace.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { template } from '../helpers/engine.js';
import type { ReadCell, ReadSheet } from '../helpers/workbook.js';
import { csvTextOf, readWorkbook } from '../helpers/workbook.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * Rows of the USD to USD corridor (rate 1, so input equals output), from the
 * template's first row; the account's last two digits choose the sandbox's
 * outcome (55 manual, 33 error then paid, 66 stuck).
 */
function usdBatch(rows: [string, string, string][]): string {
  const [header, first] = readFileSync(template('templates/global-usd-bank.csv'), 'utf8').split('\n') as [string, string];
  return `${header}\n${rows.map(([id, amount, account]) => first.replace('USD-2026-0001', id).replace('5000.00', amount).replace('123456789', account)).join('\n')}\n`;
}

/** The GBR template's first row, for 79.12 GBP: at 0.7912 exactly 100.00 USD [D9]. */
function gbrRow(id: string): string {
  const [header, first] = readFileSync(template('templates/gbr-bank.csv'), 'utf8').split('\n') as [string, string];
  return `${header}\n${first.replace('GBR-2026-0001', id).replace('1250.00', '79.12')}\n`;
}

const summary = (file: string): Record<string, string> =>
  Object.fromEntries(readFileSync(file, 'utf8').trim().split('\n').slice(1).map((line) => {
    const [section, item, currency, minor, , value] = line.split(',');
    return [`${section}.${item}${currency ? `.${currency}` : ''}`, minor || value || ''];
  }));

describe('reconciliation over two days (manual clock, sandbox over HTTP)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-reconcile-'));
  const clock = new ManualClock('2026-03-02T09:00:00.000Z');
  let sandbox: RunningSandbox;
  let workspace: Workspace;
  let store: SqliteStore;
  let client: PayoutClient;
  let config: Config;
  const ids = new Map<string, string>();

  /** Both clocks move together: the sandbox applies every step due meanwhile. */
  const advance = async (ms: number): Promise<void> => {
    for (let left = ms; left > 0; left -= Math.min(left, 10 * MINUTE)) {
      clock.advance(Math.min(left, 10 * MINUTE));
      sandbox.advance(Math.min(left, 10 * MINUTE));
    }
  };
  /** A file with its completion marker: taken and sent at once, so the scenario's times stay exact. */
  const drop = (name: string, content: string): void => {
    const path = join(workspace.folders.inbox, name);
    writeFileSync(path, content);
    writeFileSync(`${path}.done`, '');
  };
  const run = (waitMs: number, concurrency = 8) => runOnce({
    workspace, store, client, config: { ...config, engine: { ...config.engine, concurrency } }, clock, log: () => {}, waitMs, tickMs: MINUTE, sleep: advance,
  });
  const report = (req: Partial<ReportRequest>, pageRows?: number) => writeReconciliation(
    { format: 'csv', spreadsheet: false, ...req },
    { store, client, workspace, reports: config.reports, readsPerSecond: 1000, ledgerUrl: `${sandbox.operatorUrl}/ledger`, sleep: async () => {}, pageRows },
  );

  beforeAll(async () => {
    sandbox = await startSandbox({
      config: {
        port: 0,
        balances: { USD: '180000' }, // 1,800.00 USD
        payout: { clearing_ms: 1000, quick_ms: 1000, delay_ms: [MINUTE, MINUTE], slow_delay_ms: [HOUR, HOUR], error_retry_ms: 24 * HOUR, cancel_ms: 1000, refund_ms: 1000 },
      },
      clock: new ManualClock('2026-03-02T09:00:00.000Z'),
      autoTick: false,
    });
    workspace = openWorkspace(join(dir, 'ws'));
    store = SqliteStore.open(workspace.database);
    client = new PayoutClient({ baseUrl: sandbox.url, credentials: { apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret }, timeoutMs: 5000, retry: { baseMs: 1, capMs: 5, attempts: 3 }, maxAnswerBytes: 1 << 20 });
    config = configSchema.parse({
      engine: { max_input_per_row: { USD: '100000' }, polling: { first_window_ms: HOUR, first_window_reads: 60, later_interval_ms: MINUTE, reads_per_second: 1000 } },
    });

    // Day 1, 09:00.
    drop('a-usd.csv', usdBatch([
      ['A-0001', '100.00', '100000001'], // paid on day 1
      ['A-0155', '200.00', '100000155'], // manual, cancelled on day 2: refunded on day 2
      ['A-0033', '300.00', '100000033'], // error on day 1, paid on day 2
      ['A-0255', '400.00', '100000255'], // manual: stays in flight
      ['A-0066', '500.00', '100000066'], // stuck: stays in flight
      ['A-0006', '1500.00', '100000006'], // over the 1,000.00 USD per row: quote_rejected, never funded
    ]));
    drop('a-gbr.csv', gbrRow('A-0007')); // 79.12 GBP = 100.00 USD, paid on day 1
    await run(30 * MINUTE);

    // Day 2, 09:00: the manual row A-0155 is cancelled (refunded), A-0033's retry pays it.
    await advance(24 * HOUR - 30 * MINUTE);
    const [batchA] = (await store.recentBatches('2000-01-01')).filter((b) => b.file_name === 'a-usd.csv');
    const cancelled = await cancelRows({ batch: batchA?.id as string, externalIds: ['A-0155'] }, {
      store, client, clock, engine: config.engine, log: () => {}, waitMs: 5 * MINUTE, sleep: advance,
    });
    expect(cancelled.map((c) => c.cancelled)).toEqual([true]);

    // Day 2, 09:10: the balance is 1,800 - 1,600 + 200 = 400.00 USD: B-0001 is paid, B-0002 (450.00) cannot be funded.
    await advance(5 * MINUTE);
    drop('b-usd.csv', usdBatch([['B-0001', '100.00', '200000001'], ['B-0002', '450.00', '200000002']]));
    await run(30 * MINUTE, 1);
    for (const batch of await store.recentBatches('2000-01-01')) {
      for await (const row of store.resultRows(batch.id)) if (row.external_id && row.transaction_id) ids.set(row.external_id, row.transaction_id);
    }
  }, 60_000);

  afterAll(async () => {
    await client.close();
    await store.close();
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('day 1: debited 1,600.00 USD, paid out 100.00 USD and 79.12 GBP, 1,400.00 USD in flight at midnight; 0 differences', async () => {
    const outcome = await report({ date: '2026-03-02' });
    const s = summary(outcome.files.find((f) => f.endsWith('summary.csv')) as string);
    expect(s).toMatchObject({
      'period.from': '2026-03-02T00:00:00.000Z', 'period.to': '2026-03-03T00:00:00.000Z',
      'input.debited.USD': '160000', 'input.refunded.USD': '0', 'input.net.USD': '160000', 'input.in_flight.USD': '140000',
      'output.paid_out.USD': '10000', 'output.paid_out.GBP': '7912',
      'checks.service_ledger': 'compared', 'checks.differences': '0', 'checks.unexplained': '0',
      'check.service_states': 'ran: 2 unsettled transactions read', 'check.service_ledger': 'ran: compared', 'verdict.complete': 'yes', 'verdict.result': '0 differences',
    });
    expect(outcome.text).toContain('0 differences');
    expect(outcome.verdict).toMatchObject({ status: 'clean', complete: true, notRun: [] });
    const movements = readFileSync(outcome.files.find((f) => f.endsWith('movements.csv')) as string, 'utf8').trim().split('\n').slice(1);
    // In batch and line order: the batch ids are B<date>-<content hash>, so which file comes first is fixed by content.
    expect(movements.map((m) => m.split(',')[2]).filter((id) => id !== 'A-0007')).toEqual(['A-0001', 'A-0155', 'A-0033', 'A-0255', 'A-0066']);
    expect(movements).toHaveLength(6);
    expect(movements.find((m) => m.includes('A-0007'))).toMatch(/,10000,100\.00,USD,7912,79\.12,GBP,/);
    const exceptions = readFileSync(outcome.files.find((f) => f.endsWith('exceptions.csv')) as string, 'utf8');
    expect(exceptions).toMatch(/A-0255,tr_\w+,attention,manual,recipient_account_invalid/);
    expect(exceptions).toMatch(/A-0066,tr_\w+,attention,stuck,provider_timeout/);
    expect(exceptions).toMatch(/A-0006,tr_\w+,refused,canceled,"quote_rejected: input 1,500\.00 USD is over engine\.max_input_per_row 1,000\.00 USD"/);
  });

  it('day 2: debited 100.00, refunded 200.00, net -100.00 USD, paid out 400.00 USD, 900.00 USD in flight; insufficient funds listed', async () => {
    const outcome = await report({ date: '2026-03-03' });
    const s = summary(outcome.files.find((f) => f.endsWith('summary.csv')) as string);
    expect(s).toMatchObject({
      'input.debited.USD': '10000', 'input.refunded.USD': '20000', 'input.net.USD': '-10000', 'input.in_flight.USD': '90000',
      'output.paid_out.USD': '40000', 'checks.differences': '0',
    });
    expect(s['output.paid_out.GBP']).toBeUndefined();
    const exceptions = readFileSync(outcome.files.find((f) => f.endsWith('exceptions.csv')) as string, 'utf8');
    expect(exceptions).toMatch(/B-0002,tr_\w+,refused,canceled,"insufficient_funds: the service refused funding 450\.00 USD for lack of balance/);
    expect(exceptions.trim().split('\n')).toHaveLength(4); // header, A-0255, A-0066, B-0002
  });

  it('a whole batch: every row, the same totals as its days together', async () => {
    const [batchA] = (await store.recentBatches('2000-01-01')).filter((b) => b.file_name === 'a-usd.csv');
    const outcome = await report({ batch: batchA?.id as string });
    const s = summary(outcome.files.find((f) => f.endsWith('summary.csv')) as string);
    // 100 + 200 + 300 + 400 + 500 debited; 200 refunded; 100 + 300 paid; 400 + 500 in flight.
    expect(s).toMatchObject({ 'input.debited.USD': '150000', 'input.refunded.USD': '20000', 'input.net.USD': '130000', 'input.in_flight.USD': '90000', 'output.paid_out.USD': '40000' });
  });

  it('gives byte-identical files when run again on the same database, in CSV and in JSON', async () => {
    const read = (files: string[]) => files.map((f) => readFileSync(f));
    const first = read((await report({ date: '2026-03-02' })).files);
    const again = read((await report({ date: '2026-03-02' })).files);
    expect(again).toEqual(first);
    const json = read((await report({ date: '2026-03-03', format: 'json' })).files);
    expect(read((await report({ date: '2026-03-03', format: 'json' })).files)).toEqual(json);
    expect(JSON.parse(json[0]?.toString() ?? '{}').summary.input.USD.net).toEqual({ minor: '-10000', major: '-100.00' });
  });

  it('writes spreadsheet-friendly files: BOM, semicolons, decimal comma', async () => {
    const outcome = await report({ date: '2026-03-02', spreadsheet: true });
    const text = readFileSync(outcome.files.find((f) => f.endsWith('summary.csv')) as string, 'utf8');
    expect(text.startsWith('\uFEFFsection;item;currency;amount_minor;amount;value\n')).toBe(true);
    expect(text).toContain('input;debited;USD;160000;1600,00;');
    expect(outcome.files.every((f) => f.includes('.spreadsheet.'))).toBe(true);
  });

  it('writes one workbook with a sheet per CSV file, the same columns and cells, typed', async () => {
    const csv = await report({ date: '2026-03-02' });
    const outcome = await report({ date: '2026-03-02', format: 'xlsx' });
    expect(outcome.files.map((f) => basename(f))).toEqual(['reconciliation-2026-03-02.xlsx']);
    const sheets = await readWorkbook(outcome.files[0] as string);
    expect([...sheets.keys()]).toEqual(['movements', 'summary', 'exceptions', 'checks']);
    for (const [name, sheet] of sheets) {
      const records = parse(readFileSync(csv.files.find((f) => f.endsWith(`.${name}.csv`)) as string)) as string[][];
      // Cell by cell, what the CSV file says; the header bold and frozen.
      expect(sheet.rows.map((cells) => cells.map(csvTextOf)), name).toEqual(records);
      expect(sheet.rows[0]?.every((c) => c.bold), name).toBe(true);
      expect(sheet.frozenRows, name).toBe(1);
      expect(sheet.rows.flat().some((c) => c.kind === 'formula'), name).toBe(false);
    }
    const movements = sheets.get('movements') as ReadSheet;
    const header = movements.rows[0]?.map((c) => c.value) as string[];
    const gbr = movements.rows.find((cells) => cells[header.indexOf('external_id')]?.value === 'A-0007') as ReadCell[];
    const cell = (name: string): ReadCell => gbr[header.indexOf(name)] as ReadCell;
    expect(cell('line')).toMatchObject({ kind: 'number', value: 2 });
    expect(cell('debited_minor')).toMatchObject({ kind: 'number', value: 10000, numFmt: '0' });
    expect(cell('debited')).toMatchObject({ kind: 'number', value: 100, numFmt: '#,##0.00' });
    expect(cell('paid_out')).toMatchObject({ kind: 'number', value: 79.12, numFmt: '#,##0.00' });
    expect(cell('output_currency')).toMatchObject({ kind: 'text', value: 'GBP' });
    expect(cell('funded_at')).toMatchObject({ kind: 'date', numFmt: 'yyyy-mm-dd hh:mm:ss' });
    expect(cell('refunded')).toMatchObject({ kind: 'empty' });
    const summary = sheets.get('summary') as ReadSheet;
    const net = summary.rows.find((cells) => cells[0]?.value === 'input' && cells[1]?.value === 'net') as ReadCell[];
    expect(net.slice(2, 5)).toMatchObject([{ kind: 'text', value: 'USD' }, { kind: 'number', value: 160000 }, { kind: 'number', value: 1600, numFmt: '#,##0.00' }]);
    expect(summary.rows[1]?.[5]).toMatchObject({ kind: 'date', value: new Date('2026-03-02T00:00:00.000Z') });
  });

  it('a batch\'s workbook carries its result file too, as the CSV in the outbox says it', async () => {
    const [batchA] = (await store.recentBatches('2000-01-01')).filter((b) => b.file_name === 'a-usd.csv');
    const batch = batchA?.id as string;
    const outcome = await report({ batch, format: 'xlsx' });
    const sheets = await readWorkbook(outcome.files[0] as string);
    expect([...sheets.keys()]).toEqual(['movements', 'summary', 'exceptions', 'checks', 'results']);
    const results = parse(readFileSync(join(workspace.folders.outbox, `${batch}.results.csv`))) as string[][];
    expect(results[0]?.slice(0, 7)).toEqual(['external_id', 'recipient_name', 'output_amount', 'output_currency', 'state', 'state_reason', 'final_at']);
    expect(sheets.get('results')?.rows.map((cells) => cells.map(csvTextOf))).toEqual(results);
    const rows = results.slice(1).map((r) => Object.fromEntries((results[0] as string[]).map((h, i) => [h, r[i]])));
    expect(rows.find((r) => r.external_id === 'A-0001')).toMatchObject({ state: 'paid', output_amount: '100.00', input_amount: '100.00', corrects: '' });
    expect(rows.find((r) => r.external_id === 'A-0001')?.recipient_name).not.toBe('');
    expect(rows.find((r) => r.external_id === 'A-0001')?.final_at).toMatch(/^2026-03-02T\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(rows.find((r) => r.external_id === 'A-0255')).toMatchObject({ state: 'manual', final_at: '' });
  });

  it('names a check that could not run and never says 0 differences then: no ledger offered, a ledger that refuses, the service unreachable', async () => {
    const deps = { store, client, workspace, reports: config.reports, readsPerSecond: 1000, sleep: async () => {} };
    const offersNone = await writeReconciliation({ format: 'csv', spreadsheet: false, date: '2026-03-02' }, { ...deps, ledgerUrl: null });
    expect(offersNone.verdict).toMatchObject({ status: 'incomplete', complete: false, notRun: ['service_ledger'], differences: 0, words: 'incomplete: ledger not compared' });
    expect(offersNone.text).toMatch(/service ledger not offered by the service; incomplete: ledger not compared\n/);
    expect(offersNone.text).toMatch(/NOT CHECKED: service ledger: not offered by the service/);
    expect(offersNone.text).not.toMatch(/0 differences/);
    expect(summary(offersNone.files.find((f) => f.endsWith('summary.csv')) as string)).toMatchObject({
      'checks.differences': '0', 'check.service_states': 'ran: 2 unsettled transactions read', 'check.service_ledger': 'NOT RUN: not offered by the service',
      'check.held_answers': expect.stringMatching(/^ran: /), 'check.corrections_paid_once': expect.stringMatching(/^ran: /), 'verdict.complete': 'no', 'verdict.result': 'incomplete: ledger not compared',
    });
    const json = await writeReconciliation({ format: 'json', spreadsheet: false, date: '2026-03-02' }, { ...deps, ledgerUrl: null });
    const document = JSON.parse(readFileSync(json.files[0] as string, 'utf8')) as { verdict: unknown; checks: { result: string; list: { check: string; ran: boolean }[] } };
    expect(document.verdict).toEqual({ status: 'incomplete', complete: false, result: 'incomplete: ledger not compared', not_run: ['service_ledger'], unexplained: 0 });
    expect(document.checks.result).toBe('incomplete: ledger not compared');
    expect(document.checks.list.map((c) => [c.check, c.ran])).toEqual([['service_states', true], ['service_ledger', false], ['held_answers', true], ['corrections_paid_once', true]]);

    // A ledger that answers, but not with its entries.
    const refusing = await writeReconciliation({ format: 'csv', spreadsheet: false, date: '2026-03-02' }, { ...deps, ledgerUrl: `${sandbox.operatorUrl}/no-such-ledger` });
    expect(refusing.verdict.words).toBe('incomplete: ledger not compared');
    expect(refusing.checks.serviceLedger).toBe('not read: the service ledger answered 404');

    // The service gone: its states not read, its ledger not reached; the report is still written, and says so.
    const gone = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const nowhere = new PayoutClient({ baseUrl: `http://127.0.0.1:${gone}`, credentials: { apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret }, timeoutMs: 2000, retry: { baseMs: 1, capMs: 5, attempts: 2 }, maxAnswerBytes: 1 << 20 });
    try {
      const unreachable = await writeReconciliation({ format: 'csv', spreadsheet: false, date: '2026-03-02' }, { ...deps, client: nowhere, ledgerUrl: `http://127.0.0.1:${gone}/ledger` });
      expect(unreachable.verdict).toMatchObject({ status: 'incomplete', notRun: ['service_states', 'service_ledger'], words: 'incomplete: service states not read, ledger not compared' });
      expect(unreachable.checks.runs[0]?.detail).toMatch(/^read 0 of 2: /);
      expect(unreachable.checks.serviceLedger).toMatch(/^not read: the service ledger could not be reached \(ECONNREFUSED\)$/);
      expect(unreachable.files.length).toBeGreaterThan(0);
    } finally {
      await nowhere.close();
    }
  });

  it('lists a state altered in the sandbox as a difference, with both sides', async () => {
    const stuck = ids.get('A-0066') as string;
    const forced = await fetch(`${sandbox.operatorUrl}/transactions/${stuck}/state`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ state: 'paid' }) });
    expect(forced.status).toBe(200);
    const outcome = await report({ date: '2026-03-03' });
    const checks = readFileSync(outcome.files.find((f) => f.endsWith('checks.csv')) as string, 'utf8');
    expect(checks).toContain(`A-0066,${stuck},state,stuck,paid,`);
    expect(outcome.text).toMatch(/1 difference/);
    expect(readdirSync(join(workspace.folders.outbox, 'reports')).length).toBeGreaterThan(0);
  });

  it('writes in pages the same CSV bytes as the whole report rendered at once: each day, a batch, for spreadsheets too', async () => {
    const [batchA] = (await store.recentBatches('2000-01-01')).filter((b) => b.file_name === 'a-usd.csv');
    for (const scope of [{ date: '2026-03-02' }, { date: '2026-03-03' }, { batch: batchA?.id as string }]) {
      for (const spreadsheet of [false, true]) {
        // The whole report in memory (the JSON path), rendered as CSV as before the files were written in pages.
        const whole = await report({ ...scope, format: 'json' });
        const expected = renderCsv(whole.reconciliation, whole.checks, { spreadsheet });
        // Two rows a page: every page boundary crossed.
        const paged = await report({ ...scope, spreadsheet }, 2);
        const names = paged.files.map((f) => basename(f).replace(/^reconciliation-[^.]+(\.spreadsheet)?\./, ''));
        expect(names).toEqual(Object.keys(expected));
        expect(paged.files.map((f) => readFileSync(f, 'utf8'))).toEqual(Object.values(expected));
        const withoutFiles = (text: string): string[] => text.split('\n').filter((l) => !l.includes('/reports/reconciliation-'));
        expect(withoutFiles(paged.text)).toEqual(withoutFiles(whole.text));
      }
    }
    // Something to compare: a difference (the state altered above) and exceptions are in them.
    const day2 = await report({ date: '2026-03-03' });
    expect(readFileSync(day2.files.find((f) => f.endsWith('checks.csv')) as string, 'utf8').trim().split('\n').length).toBeGreaterThan(1);
    expect(readFileSync(day2.files.find((f) => f.endsWith('exceptions.csv')) as string, 'utf8').trim().split('\n').length).toBeGreaterThan(1);
  });
});
