/**
 * engine.batch_budget against a service that lies about amounts: whatever the
 * answers say, the service never debits the batch beyond its budget, and every
 * debit is counted.
 */
import { describe, expect, it } from 'vitest';
import { template } from '../helpers/engine.js';
import { engineBehindLiar, otherOutputCurrency, PATHS, scaleInputAmount, transform } from '../helpers/lying-service.js';

const BUDGET = '160000'; // row 1 (1250.00 GBP) costs ~1579.88 USD; rows 1+2 cost ~1972 USD: row 2 must be over_budget

describe('the batch budget against a lying service', () => {
  const setting = engineBehindLiar();

  const debited = (): { count: number; total: bigint } => {
    let count = 0;
    let total = 0n;
    for (const e of setting.ctx.sandbox.store.ledger(0, 1_000_000)) {
      if (e.kind === 'debit' && e.transaction_id) { count += 1; total += -BigInt(e.amount) > 0n ? -BigInt(e.amount) : BigInt(e.amount); }
    }
    return { count, total };
  };
  const config = { engine: { concurrency: 1, batch_budget: { USD: BUDGET } } };

  it('control: with an honest service row 2 is over_budget and only one row is debited', async () => {
    setting.ctx.drop(template('templates/gbr-bank.csv'));
    const report = await setting.ctx.run(config);
    const rows = await setting.ctx.results(report.batches[0]?.batch as string);
    expect(rows.map((r) => r.state_reason_code)).toEqual(['', 'over_budget']);
    expect(debited().count).toBe(1);
    expect(Number(debited().total)).toBeLessThanOrEqual(Number(BUDGET));
  });

  it('a fund answer carrying another input amount (0) is held with its debit counted: the budget holds', async () => {
    setting.liar.lie({ match: { method: 'POST', path: PATHS.fund }, times: 1, act: scaleInputAmount(0n) });
    setting.ctx.drop(template('templates/gbr-bank.csv'));
    const report = await setting.ctx.run(config);
    const rows = await setting.ctx.results(report.batches[0]?.batch as string);
    expect(rows[0]).toMatchObject({ state: 'answer_mismatch' });
    expect(rows[0]?.state_reason).toMatch(/input_amount_in_cents asked \d+, answered 0/);
    expect(rows[1]?.state_reason_code).toBe('over_budget');
    expect(Number(debited().total)).toBeLessThanOrEqual(Number(BUDGET));
  });

  it('a create answer quoting 1 cent: the funding is refused on its guard, the real quote read again is reserved again and over budget', async () => {
    setting.liar.lie({
      match: { method: 'POST', path: PATHS.create, body: (b) => (b as { external_id?: string }).external_id === 'GBR-2026-0002' },
      times: 1,
      act: transform((body) => ({ ...(body as object), input_amount_in_cents: '1' }), 'tiny_input'),
    });
    setting.ctx.drop(template('templates/gbr-bank.csv'));
    await setting.ctx.run(config);
    // Row 2's funding with the 1-cent guard is refused (422: the amount does not match); read again, the real quote is over budget.
    const funds = setting.liar.seen.filter((s) => s.method === 'POST' && PATHS.fund.test(s.path)).map((s) => s.status);
    expect(funds).toEqual([200, 422]);
    const rows = await setting.ctx.results((await setting.ctx.store.openBatches())[0]?.id ?? (await setting.ctx.store.recentBatches('2000-01-01'))[0]?.id as string);
    expect(rows[1]?.state_reason_code).toBe('over_budget');
    expect(Number(debited().total)).toBeLessThanOrEqual(Number(BUDGET));
  });

  it('a fund answer that does not match (another output currency) holds the row; its debit still counts, against the budget and in the summary', async () => {
    setting.liar.lie({ match: { method: 'POST', path: PATHS.fund }, times: 1, act: otherOutputCurrency('EUR') });
    setting.ctx.drop(template('templates/gbr-bank.csv'));
    const report = await setting.ctx.run(config);
    const [batch] = report.batches;
    const rows = await setting.ctx.results(batch?.batch as string);
    const d = debited();
    // The summary's funded must account for every debit the service made for the batch.
    expect({ funded: batch?.funded.USD ?? '0', row2: rows[1]?.state_reason_code }).toEqual({ funded: d.total.toString(), row2: 'over_budget' });
  });
});
