import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineContext } from '../helpers/engine.js';
import { atRest, debitsPerTransaction, engineContext, template } from '../helpers/engine.js';
import type { ReadCell } from '../helpers/workbook.js';
import { csvTextOf, readWorkbook } from '../helpers/workbook.js';

const RESULT_COLUMNS = [
  'external_id', 'recipient_name', 'output_amount', 'output_currency', 'state', 'state_reason', 'final_at',
  'line', 'transaction_id', 'state_reason_code', 'input_amount', 'input_currency', 'output_amount_in_cents', 'input_amount_in_cents', 'error', 'corrects', 'next_step',
];

describe('paybatch run: the payout engine against the sandbox', () => {
  let ctx: EngineContext;
  afterEach(async () => ctx.stop());

  it('pays every row of every corridor exactly once, writes results in input order, and archives the settled batches', async () => {
    ctx = await engineContext();
    for (const name of ['gbr-bank.csv', 'eur-iban-bank.csv', 'global-usd-bank.csv', 'nga-bank.csv', 'nga-cash.csv']) ctx.drop(template(`templates/${name}`), name);
    const report = await ctx.run();
    expect(report.batches).toHaveLength(5);
    for (const batch of report.batches) {
      expect(batch).toMatchObject({ status: 'settled', unsettled: 0 });
      const rows = await ctx.results(batch.batch);
      expect(Object.keys(rows[0] ?? {})).toEqual(RESULT_COLUMNS);
      expect(rows.map((r) => r.state)).toEqual(rows.map(() => 'paid'));
      expect(rows.map((r) => r.next_step)).toEqual(rows.map(() => 'Paid: nothing to do.'));
      expect(rows.map((r) => Number(r.line))).toEqual(rows.map((_, i) => i + 2));
      for (const row of rows) expect(row.transaction_id).toMatch(/^tr_/);
    }
    const debits = debitsPerTransaction(ctx.sandbox);
    expect(debits.size).toBe(11);
    expect([...debits.values()].every((n) => n === 1)).toBe(true);
    expect(readdirSync(ctx.workspace.folders.archive)).toHaveLength(5);
    expect(readdirSync(ctx.workspace.folders.processing)).toEqual([]);
    expect(readdirSync(ctx.workspace.folders.inbox)).toEqual([]);
    expect(readdirSync(ctx.workspace.folders.outbox).filter((f) => f.endsWith('.xlsx'))).toEqual([]);
  });

  it('changes no process setting itself: the hook the CLI hands it (V8 tuning for sending) is called as each batch\'s sending starts', async () => {
    ctx = await engineContext();
    ctx.drop(template('templates/gbr-bank.csv'), 'gbr-bank.csv');
    ctx.drop(template('templates/nga-cash.csv'), 'nga-cash.csv');
    const sendingStarted: number[] = [];
    const report = await ctx.run({}, 5000, {}, { beforeSending: () => void sendingStarted.push(sendingStarted.length) });
    expect(report.batches).toHaveLength(2);
    expect(sendingStarted.length).toBeGreaterThanOrEqual(2);
  });

  it('with reports.results_xlsx, writes BATCH.results.xlsx beside the CSV once every row of the batch is final', async () => {
    ctx = await engineContext();
    ctx.drop(template('templates/gbr-bank.csv'), 'gbr.csv');
    ctx.drop(template('demo-batch.csv'), 'demo.csv');
    const report = await ctx.run({ reports: { results_xlsx: true }, batch: { invalid_rows: 'skip_invalid' } }, 30_000, {}, { endWhen: atRest(ctx, 2) });
    const settled = report.batches.find((b) => b.file === 'gbr.csv');
    const open = report.batches.find((b) => b.file === 'demo.csv');
    expect(settled).toMatchObject({ status: 'settled', unsettled: 0 });
    expect(open?.unsettled).toBeGreaterThan(0);
    const outbox = readdirSync(ctx.workspace.folders.outbox);
    // Rows in attention states are not final: that batch's results are the CSV alone, for now.
    expect(outbox.filter((f) => f.endsWith('.results.xlsx'))).toEqual([`${settled?.batch}.results.xlsx`]);
    const csv = parse(readFileSync(join(ctx.workspace.folders.outbox, `${settled?.batch}.results.csv`))) as string[][];
    const sheet = (await readWorkbook(join(ctx.workspace.folders.outbox, `${settled?.batch}.results.xlsx`))).get('results');
    expect(sheet?.rows.map((cells) => cells.map(csvTextOf))).toEqual(csv);
    const header = csv[0] as string[];
    const first = sheet?.rows[1] as ReadCell[];
    expect(first[header.indexOf('output_amount')]).toMatchObject({ kind: 'number', value: 1250, numFmt: '#,##0.00' });
    expect(first[header.indexOf('output_currency')]).toMatchObject({ kind: 'text', value: 'GBP' });
    expect(first[header.indexOf('input_amount')]).toMatchObject({ kind: 'number', numFmt: '#,##0.00' });
    expect(first[header.indexOf('final_at')]).toMatchObject({ kind: 'date', numFmt: 'yyyy-mm-dd hh:mm:ss' });
    expect(first[header.indexOf('recipient_name')]).toMatchObject({ kind: 'text', value: expect.stringContaining('Turing') });
  });

  it('reports each deterministic outcome with its state_reason code, and keeps following the ones in attention states', async () => {
    ctx = await engineContext();
    ctx.drop(template('demo-batch.csv'));
    const report = await ctx.run({ batch: { invalid_rows: 'skip_invalid' } }, 30_000, {}, { endWhen: atRest(ctx) });
    const [batch] = report.batches;
    expect(batch?.by_state).toEqual({ error: 1, exception: 1, invalid: 2, manual: 1, paid: 12, stuck: 1 });
    expect(batch?.unsettled).toBe(4);
    const rows = await ctx.results(batch?.batch as string);
    const byId = Object.fromEntries(rows.map((r) => [r.external_id, r]));
    expect(byId['DEMO-012']).toMatchObject({ state: 'paid' });
    expect(byId['DEMO-013']).toMatchObject({ state: 'error', state_reason_code: 'recipient_phone_number_invalid' });
    expect(byId['DEMO-014']).toMatchObject({ state: 'manual', state_reason_code: 'recipient_account_invalid' });
    expect(byId['DEMO-015']).toMatchObject({ state: 'stuck', state_reason_code: 'provider_timeout' });
    expect(byId['DEMO-016']).toMatchObject({ state: 'exception', state_reason_code: 'internal_exception' });
    expect(byId['DEMO-017']).toMatchObject({ state: 'invalid', transaction_id: '' });
    expect(byId['DEMO-017']?.error).toMatch(/uk_modulus_check_failed/);
    // Invalid rows still say how much, in what, to whom, and when: from the file as written, at the batch's time.
    expect(byId['DEMO-017']).toMatchObject({ output_amount: '15.00', output_currency: 'GBP', recipient_name: 'Alan Turing', output_amount_in_cents: '' });
    expect(byId['DEMO-018']).toMatchObject({ state: 'invalid', output_amount: '1.001', output_currency: 'EUR', recipient_name: 'Emmy Noether' });
    for (const id of ['DEMO-017', 'DEMO-018']) expect(byId[id]?.final_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(readdirSync(ctx.workspace.folders.processing)).toHaveLength(1);
  });

  it('refuses a file taken twice, and a row whose external_id an earlier batch paid, before any call', async () => {
    ctx = await engineContext();
    ctx.drop(template('templates/nga-cash.csv'), 'first.csv');
    await ctx.run();
    const before = debitsPerTransaction(ctx.sandbox).size;
    ctx.drop(template('templates/nga-cash.csv'), 'again.csv');
    const report = await ctx.run();
    expect(report.intake.map((o) => o.kind)).toEqual(['duplicate']);
    expect(readdirSync(ctx.workspace.folders.failed).some((f) => f.endsWith('again.csv'))).toBe(true);
    expect(debitsPerTransaction(ctx.sandbox).size).toBe(before);
  });

  it('stops funding when the balance runs out, cancelling or not sending the rest as insufficient_funds', async () => {
    ctx = await engineContext({ balances: { USD: '600000' } });
    ctx.drop(template('templates/global-usd-bank.csv'), 'a.csv'); // 5000.00 + 75.10 USD
    const report = await ctx.run({ engine: { concurrency: 1 } });
    const rows = await ctx.results(report.batches[0]?.batch as string);
    expect(rows.map((r) => r.state)).toEqual(['paid', 'paid']);
    ctx.drop(template('templates/gbr-bank.csv'), 'b.csv'); // needs about 1966 USD: more than is left
    const second = await ctx.run({ engine: { concurrency: 1 } });
    const refused = await ctx.results(second.batches.find((b) => b.file === 'b.csv')?.batch as string);
    expect(refused.map((r) => [r.state, r.error])).toEqual([['canceled', 'insufficient_funds'], ['insufficient_funds', '']]);
    expect(BigInt(ctx.sandbox.store.balances().USD as string)).toBeGreaterThanOrEqual(0n);
    expect([...debitsPerTransaction(ctx.sandbox).values()].every((n) => n === 1)).toBe(true);
  });

  it('cancels a row whose computed input amount is over the per-row maximum (quote_rejected)', async () => {
    ctx = await engineContext();
    ctx.drop(template('templates/global-usd-bank.csv'));
    const report = await ctx.run({ engine: { max_input_per_row: { USD: '100000' } } });
    const rows = await ctx.results(report.batches[0]?.batch as string);
    expect(rows.map((r) => [r.external_id, r.state, r.error])).toEqual([['USD-2026-0001', 'canceled', 'quote_rejected'], ['USD-2026-0002', 'paid', '']]);
    expect(debitsPerTransaction(ctx.sandbox).size).toBe(1);
  });

  it('does not send rows on a corridor the service has disabled', async () => {
    ctx = await engineContext();
    ctx.sandbox.service.setCorridorActive('nga-cash', false);
    ctx.drop(template('templates/nga-cash.csv'));
    const report = await ctx.run();
    const rows = await ctx.results(report.batches[0]?.batch as string);
    expect(rows.map((r) => r.state)).toEqual(['corridor_inactive', 'corridor_inactive']);
    expect(ctx.sandbox.store.allTransactions().next().done).toBe(true);
  });

  it('of a batch on several corridors, ends the rows of the disabled one only, told in file order, and pays the others', async () => {
    ctx = await engineContext();
    ctx.sandbox.service.setCorridorActive('nga-cash', false);
    ctx.drop(template('demo-batch.csv'));
    const report = await ctx.run({ batch: { invalid_rows: 'skip_invalid' } }, 30_000, {}, { endWhen: atRest(ctx) });
    const batch = report.batches[0]?.batch as string;
    const rows = await ctx.results(batch);
    // Lines 11 to 14 are cash to Nigeria, paid out in naira (11, 13, 14) or in dollars (12): two corridors of the service's one.
    const cash = ['DEMO-010', 'DEMO-011', 'DEMO-012', 'DEMO-013'];
    expect(rows.filter((r) => r.state === 'corridor_inactive').map((r) => r.external_id)).toEqual(cash);
    expect(rows.filter((r) => Number(r.line) < 11).every((r) => r.state === 'paid')).toBe(true);
    const sent = new Set([...ctx.sandbox.store.allTransactions()].map((tx) => tx.external_id));
    expect(cash.filter((id) => sent.has(id))).toEqual([]);
    expect(ctx.events.filter((e) => e.event === 'corridor_inactive').map((e) => e.fields)).toEqual([11, 12, 13, 14].map((line) => ({
      batch, line, external_id: `DEMO-0${line - 1}`, country: 'NGA', type: 'cash',
    })));
    expect((await ctx.store.row(batch, 12))?.outcome_detail).toBe('the cash corridor to NGA for USD to USD is not active at the service');
    expect((await ctx.store.row(batch, 13))?.outcome_detail).toBe('the cash corridor to NGA for USD to NGN is not active at the service');
  });

  it('waits for KYC approval before funding, and gives up at the funding deadline (sender_not_approved)', async () => {
    ctx = await engineContext({ kyc: { mode: 'review', verify_after_ms: 20, approve_after_ms: 20 } });
    ctx.drop(template('templates/nga-cash.csv'));
    const approved = await ctx.run();
    expect((await ctx.results(approved.batches[0]?.batch as string)).map((r) => r.state)).toEqual(['paid', 'paid']);
    await ctx.stop();
    ctx = await engineContext({ kyc: { mode: 'review', verify_after_ms: 5000, approve_after_ms: 5000 } });
    ctx.drop(template('templates/nga-cash.csv'));
    const late = await ctx.run({ engine: { funding_deadline_ms: 100 } });
    expect((await ctx.results(late.batches[0]?.batch as string)).map((r) => [r.state, r.error])).toEqual([['canceled', 'sender_not_approved'], ['canceled', 'sender_not_approved']]);
    expect(debitsPerTransaction(ctx.sandbox).size).toBe(0);
  });

  it('pays each row once through resets after commit, 5xx and 429 storms', async () => {
    ctx = await engineContext({
      seed: 7,
      faults: { http_500_rate: 0.1, http_503_rate: 0.05, http_429_rate: 0.05, retry_after_s: 0, reset_after_commit: { create: 0.3, fund: 0.3 } },
    });
    for (const name of ['gbr-bank.csv', 'eur-iban-bank.csv', 'global-usd-bank.csv', 'nga-bank.csv', 'nga-cash.csv']) ctx.drop(template(`templates/${name}`), name);
    let report = await ctx.run({}, 5000);
    for (let again = 0; again < 5 && report.batches.some((b) => b.unsettled > 0); again++) report = await ctx.run({}, 5000);
    const states = (await Promise.all(report.batches.map((b) => ctx.results(b.batch)))).flat().map((r) => r.state);
    expect(states).toEqual(states.map(() => 'paid'));
    const debits = debitsPerTransaction(ctx.sandbox);
    expect(debits.size).toBe(11);
    expect([...debits.values()].every((n) => n === 1)).toBe(true);
    expect([...ctx.sandbox.store.allTransactions()]).toHaveLength(11);
  });
});

describe('paybatch run: refusals and budgets', () => {
  let ctx: EngineContext;
  afterEach(async () => ctx.stop());

  it('reports a row the service refuses with 422 as rejected_by_service, with its reason, and goes on with the others', async () => {
    // The service requires an email on this corridor; paybatch's rules do not: the service must catch it.
    const { loadSandboxConfig } = await import('../../src/sandbox/config.js');
    const corridors = loadSandboxConfig().corridors.map((c) => (c.id === 'nga-cash' ? { ...c, required_recipient_fields: [...c.required_recipient_fields, 'email'] } : c));
    ctx = await engineContext({ corridors });
    ctx.drop(template('templates/nga-cash.csv'));
    ctx.drop(template('templates/nga-bank.csv'));
    const report = await ctx.run();
    const cash = await ctx.results(report.batches.find((b) => b.file === 'batch-1.csv')?.batch as string);
    expect(cash.map((r) => r.state)).toEqual(['rejected_by_service', 'rejected_by_service']);
    expect(cash[0]?.error).toMatch(/recipient\.email is required for corridor nga-cash/);
    const bank = await ctx.results(report.batches.find((b) => b.file === 'batch-2.csv')?.batch as string);
    expect(bank.map((r) => r.state)).toEqual(['paid', 'paid']);
  });

  it('stops funding in the middle of a batch when the balance runs out', async () => {
    ctx = await engineContext({ balances: { EUR: '250000' } }); // 2000.00 fits, 99.99 fits, 480.00 does not
    ctx.drop(template('templates/eur-iban-bank.csv'));
    const report = await ctx.run({ engine: { concurrency: 1 } });
    const rows = await ctx.results(report.batches[0]?.batch as string);
    expect(rows.map((r) => [r.external_id, r.state, r.error])).toEqual([
      ['EUR-2026-0001', 'paid', ''],
      ['EUR-2026-0002', 'paid', ''],
      ['EUR-2026-0003', 'canceled', 'insufficient_funds'],
    ]);
    expect(ctx.sandbox.store.balances().EUR).toBe(String(250000 - 200000 - 9999));
  });

  it('reads a transaction no more often than the polling budget allows', async () => {
    ctx = await engineContext();
    ctx.drop(template('demo-batch.csv'));
    // On the engine's clock: the run lasted its whole wait.
    const started = ctx.clock.now();
    const report = await ctx.run({ batch: { invalid_rows: 'skip_invalid' }, engine: { polling: { first_window_ms: 600, first_window_reads: 3, later_interval_ms: 60_000, reads_per_second: 100 } } }, 1500);
    const elapsed = ctx.clock.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1400);
    const stuck = (await ctx.results(report.batches[0]?.batch as string)).find((r) => r.state === 'stuck');
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(ctx.workspace.database, { readonly: true });
    const counted = db.prepare('SELECT reads FROM rows WHERE external_id = ?').pluck().get(stuck?.external_id) as number;
    db.close();
    // 3 reads in the first window, then none for a minute.
    expect(counted).toBeLessThanOrEqual(3);
    expect(counted).toBeGreaterThanOrEqual(1);
  });
});
