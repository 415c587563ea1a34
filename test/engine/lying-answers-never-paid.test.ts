/**
 * The engine against a service that lies (test/helpers/lying-service.ts, a
 * proxy in front of the real sandbox): answers naming another transaction,
 * other amounts or currencies, lookups that find someone else's, refusals in
 * every shape, answers lost after the call took effect, absurd Retry-After.
 * Nothing that was not asked for is ever funded or counted as paid.
 */
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/config.js';
import { writeReconciliation } from '../../src/engine/reconcile-report.js';
import { debitsPerTransaction, gbrRowsBatch, template } from '../helpers/engine.js';
import {
  answer, engineBehindLiar, loseAnswerAfterCommit, otherInputCurrency, otherOutputCurrency, otherTransaction, PATHS, rule, scaleOutputAmount,
} from '../helpers/lying-service.js';

/** The GBR template's first row once per external id, each paying its own account (gbrRowsBatch): many payouts, not one repeated. */
const batchOf = (dir: string, name: string, externalIds: readonly string[]): string => gbrRowsBatch(dir, name, externalIds);

describe('the engine against a service that lies', () => {
  const setting = engineBehindLiar();

  const fundCalls = (): string[] => setting.liar.seen.filter((s) => s.method === 'POST' && PATHS.fund.test(s.path)).map((s) => s.path);
  const ownTransaction = (externalId: string) => [...setting.ctx.sandbox.store.allTransactions()].find((t) => t.external_id === externalId);

  it('a create answer naming another transaction: never funded, the row held as answer_mismatch with both sides, a difference in the report', async () => {
    setting.liar.lie(rule('POST', PATHS.create, otherTransaction(), 1));
    setting.ctx.drop(template('templates/gbr-bank.csv'));
    const report = await setting.ctx.run();
    const [batch] = report.batches;
    const rows = await setting.ctx.results(batch?.batch as string);
    expect(rows[0]).toMatchObject({ external_id: 'GBR-2026-0001', state: 'answer_mismatch', state_reason_code: 'answer_mismatch', transaction_id: '' });
    expect(rows[0]?.state_reason).toMatch(/the create answer did not match the request: external_id asked GBR-2026-0001, answered FOREIGN-\d+; output_amount_in_cents asked 125000, answered 77777700; output_currency asked GBP, answered USD/);
    expect(rows[1]).toMatchObject({ state: 'paid' });
    expect(batch).toMatchObject({ need_person: 1, by_reason: { answer_mismatch: 1 }, unsettled: 0 });
    // Nothing funded but the honest row: not the foreign transaction, not the row's own (left for the service to expire).
    expect(fundCalls()).toHaveLength(1);
    expect(fundCalls().some((p) => p.includes('foreign'))).toBe(false);
    expect(debitsPerTransaction(setting.ctx.sandbox).has(ownTransaction('GBR-2026-0001')?.id as string)).toBe(false);
    const logged = setting.ctx.events.find((e) => e.event === 'answer_mismatch');
    expect(logged?.fields).toMatchObject({ external_id: 'GBR-2026-0001', fields: expect.arrayContaining([expect.objectContaining({ field: 'external_id', asked: 'GBR-2026-0001' })]) });
    const reconciliation = await writeReconciliation({ batch: batch?.batch, format: 'json', spreadsheet: false }, {
      store: setting.ctx.store, client: setting.ctx.client(), workspace: setting.ctx.workspace, reports: configSchema.parse({}).reports, readsPerSecond: 500, ledgerUrl: `${setting.ctx.sandbox.operatorUrl}/ledger`,
    });
    expect(reconciliation.checks.differences).toEqual(expect.arrayContaining([expect.objectContaining({ check: 'answer_mismatch', line: 2, paybatch: 'asked external_id GBR-2026-0001', explained: '' })]));
    expect(reconciliation.text).not.toMatch(/0 differences/);
  });

  it('create answers lost, then lookups answering one foreign transaction: no row adopts it, nothing is funded', async () => {
    setting.liar.lie(rule('POST', PATHS.create, loseAnswerAfterCommit()));
    setting.liar.lie(rule('GET', PATHS.lookup, otherTransaction({ reuse: true })));
    setting.ctx.drop(batchOf(setting.ctx.dir, 'three.csv', ['LOST-1', 'LOST-2', 'LOST-3']));
    const report = await setting.ctx.run();
    const rows = await setting.ctx.results(report.batches[0]?.batch as string);
    expect(rows.map((r) => [r.state, r.transaction_id])).toEqual([['answer_mismatch', ''], ['answer_mismatch', ''], ['answer_mismatch', '']]);
    for (const row of rows) expect(row.state_reason).toMatch(/the lookup by external_id did not match the request: external_id asked LOST-\d, answered FOREIGN-\d+/);
    expect(fundCalls()).toEqual([]);
    expect(debitsPerTransaction(setting.ctx.sandbox).size).toBe(0);
  });

  it('a read answering another transaction in state paid: the row is not counted as paid, its own transaction is never funded', async () => {
    await setting.again({ kyc: { mode: 'review', verify_after_ms: 60_000, approve_after_ms: 60_000 } });
    setting.liar.lie(rule('GET', PATHS.transaction, otherTransaction({ state: 'paid' })));
    setting.ctx.drop(template('templates/gbr-bank.csv'));
    const report = await setting.ctx.run({}, 2000);
    const [batch] = report.batches;
    expect(batch?.by_state).toEqual({ answer_mismatch: 2 });
    expect(batch?.paid_out).toEqual({});
    const rows = await setting.ctx.results(batch?.batch as string);
    for (const row of rows) expect(row.state_reason).toMatch(/^a read did not match the request: id asked tr_\w+, answered tr_foreign_\d+; external_id asked GBR-2026-000\d, answered FOREIGN-\d+/);
    expect(fundCalls()).toEqual([]);
  });

  it.each([
    ['the output amount x100', scaleOutputAmount(100n), /output_amount_in_cents asked 125000, answered 12500000/],
    ['another output currency', otherOutputCurrency('EUR'), /output_currency asked GBP, answered EUR/],
    ['another input currency', otherInputCurrency('EUR'), /input_currency asked USD, answered EUR/],
  ])('a create answer with %s is held, never funded', async (_what, lie, reason) => {
    setting.liar.lie(rule('POST', PATHS.create, lie, 1));
    setting.ctx.drop(template('templates/gbr-bank.csv'));
    const report = await setting.ctx.run();
    const rows = await setting.ctx.results(report.batches[0]?.batch as string);
    expect(rows[0]?.state).toBe('answer_mismatch');
    expect(rows[0]?.state_reason).toMatch(reason);
    expect(fundCalls()).toHaveLength(1);
    expect(debitsPerTransaction(setting.ctx.sandbox).has(ownTransaction('GBR-2026-0001')?.id as string)).toBe(false);
  });

  it('external ids over every printable ASCII character and some non-ASCII, every answer lost after commit: each looked up and funded once', async () => {
    let printable = '';
    for (let code = 0x21; code < 0x7f; code++) printable += String.fromCharCode(code);
    const ids = [`A ${printable} Z`, `O'Brien & Sons (2026)*!`, 'Zahlung für Müller – 10 €', '付款-7 #1', '100% sure?=yes;x=1'];
    setting.liar.lie(rule('POST', PATHS.create, loseAnswerAfterCommit()));
    setting.liar.lie(rule('POST', PATHS.fund, loseAnswerAfterCommit()));
    setting.ctx.drop(batchOf(setting.ctx.dir, 'odd-ids.csv', ids));
    const report = await setting.ctx.run({}, 8000);
    const rows = await setting.ctx.results(report.batches[0]?.batch as string);
    expect(rows.map((r) => r.external_id)).toEqual(ids);
    expect(rows.map((r) => r.state)).toEqual(ids.map(() => 'paid'));
    expect(setting.liar.badSignatures).toBe(0);
    const transactions = [...setting.ctx.sandbox.store.allTransactions()];
    expect(transactions.map((t) => t.external_id).sort()).toEqual([...ids].sort());
    const debits = debitsPerTransaction(setting.ctx.sandbox);
    expect(debits.size).toBe(ids.length);
    expect([...debits.values()].every((n) => n === 1)).toBe(true);
    expect(setting.liar.seen.filter((s) => s.method === 'GET' && PATHS.lookup.test(s.path)).length).toBeGreaterThanOrEqual(ids.length);
  });

  it('the balance refused in the list form of D5: insufficient_funds, nothing more in USD created or funded, EUR keeps paying', async () => {
    setting.liar.lie({ match: { method: 'POST', path: PATHS.fund, body: (b) => (b as { input_currency?: string }).input_currency === 'USD' }, act: answer(422, { errors: ['balance insufficient funds'] }) });
    setting.ctx.drop(batchOf(setting.ctx.dir, 'usd.csv', Array.from({ length: 12 }, (_, i) => `USD-ROW-${i + 1}`)), 'a-usd.csv');
    setting.ctx.drop(template('templates/eur-iban-bank.csv'), 'b-eur.csv');
    const report = await setting.ctx.run({ engine: { concurrency: 1 } });
    const usd = report.batches.find((b) => b.file === 'a-usd.csv');
    const eur = report.batches.find((b) => b.file === 'b-eur.csv');
    expect(Object.keys(eur?.by_state ?? {})).toEqual(['paid']);
    expect(usd).toMatchObject({ unsettled: 0, by_reason: { insufficient_funds: 12 } });
    expect(usd?.need_person).toBe(12);
    const rows = await setting.ctx.results(usd?.batch as string);
    expect(rows[0]).toMatchObject({ state: 'canceled', state_reason_code: 'insufficient_funds' });
    expect(rows[0]?.state_reason).toMatch(/^the service refused funding \d{1,3}(,\d{3})*\.\d\d USD for lack of balance \("balance insufficient funds"\)$/);
    for (const row of rows.slice(1)) {
      expect(row.state_reason_code).toBe('insufficient_funds');
      expect(row.state_reason).toMatch(/the USD balance ran out \(batch B\S+ line 2: funding \d{1,3}(,\d{3})*\.\d\d USD refused\)/);
    }
    // Stopped at once: one funding call in USD, and only the rows already on their way were created (then cancelled).
    const usdCreated = [...setting.ctx.sandbox.store.allTransactions()].filter((t) => t.external_id.startsWith('USD-ROW-'));
    expect(fundCalls().filter((p) => usdCreated.some((t) => p.includes(t.id)))).toHaveLength(1);
    expect(usdCreated.length).toBeLessThanOrEqual(3);
    expect(rows.filter((r) => r.state === 'insufficient_funds').length).toBeGreaterThanOrEqual(9);
    expect(setting.ctx.events.filter((e) => e.event === 'balance_exhausted')).toHaveLength(1);
  });

  it('any other funding refusal ends the row with the service\'s message, tried once', async () => {
    setting.liar.lie(rule('POST', PATHS.fund, answer(422, { errors: { compliance: ['payout blocked by compliance review'] } }), 1));
    setting.ctx.drop(template('templates/gbr-bank.csv'));
    const report = await setting.ctx.run();
    const rows = await setting.ctx.results(report.batches[0]?.batch as string);
    expect(rows[0]).toMatchObject({ state: 'canceled', state_reason_code: 'fund_refused', state_reason: 'the service refused the funding: compliance payout blocked by compliance review' });
    expect(rows[1]?.state).toBe('paid');
    expect(fundCalls().filter((p) => p.includes(rows[0]?.transaction_id as string))).toHaveLength(1);
    expect(report.batches[0]).toMatchObject({ need_person: 1, by_reason: { fund_refused: 1 } });
  });

  it('an absurd Retry-After never outlasts --wait, and is said', async () => {
    setting.liar.lie(rule('POST', PATHS.create, answer(429, { errors: ['slow down'] }, { 'retry-after': '999999999' })));
    setting.ctx.drop(template('templates/gbr-bank.csv'));
    const said: string[] = [];
    const started = Date.now();
    const report = await setting.ctx.run({}, 1500, { retry: { baseMs: 100, capMs: 30_000, attempts: 6 }, log: (event) => said.push(event) });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(said).toContain('retry_after_capped');
    expect(report.batches[0]?.by_state).toEqual({ not_sent_yet: 2 });
  });
});
