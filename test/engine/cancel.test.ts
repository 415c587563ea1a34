import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import { cancelRows } from '../../src/engine/cancel.js';
import type { EngineContext } from '../helpers/engine.js';
import { atRest, FAST_ENGINE, engineContext, template } from '../helpers/engine.js';

describe('paybatch cancel', () => {
  let ctx: EngineContext;
  afterEach(async () => ctx.stop());

  it('cancels the rows in error and manual, follows them to refunded with the balance restored, and refuses a stuck one', async () => {
    ctx = await engineContext();
    ctx.drop(template('demo-batch.csv'));
    // Until every row is at rest (at most 30 s, for a busy machine): DEMO-012's passing error retried to paid.
    const run = await ctx.run({ batch: { invalid_rows: 'skip_invalid' } }, 30_000, {}, { endWhen: atRest(ctx) });
    const batch = run.batches[0]?.batch as string;
    const usdBefore = BigInt(ctx.sandbox.store.balances().USD as string);
    const client = ctx.client();
    const engine = configSchema.parse({ engine: FAST_ENGINE }).engine;
    const deps = { store: ctx.store, client, clock: systemClock, engine, log: () => {}, waitMs: 5000 };
    const lines = await cancelRows({ batch, states: ['error', 'manual'] }, deps);
    expect(lines.map((l) => [l.external_id, l.state_before, l.cancelled, l.state_after])).toEqual([
      ['DEMO-013', 'error', true, 'refunded'],
      ['DEMO-014', 'manual', true, 'refunded'],
    ]);
    const refunded = ctx.sandbox.store.ledger(0, 10_000).filter((e) => e.kind === 'credit');
    expect(refunded).toHaveLength(2);
    expect(BigInt(ctx.sandbox.store.balances().USD as string)).toBe(usdBefore + refunded.reduce((sum, e) => sum + BigInt(e.amount), 0n));
    const stuck = await cancelRows({ batch, externalIds: ['DEMO-015'] }, deps);
    expect(stuck).toEqual([expect.objectContaining({ external_id: 'DEMO-015', cancelled: false, state_after: 'stuck', reason: expect.stringMatching(/may_cancel is false/) })]);
    // Named explicitly but not cancellable, or not there at all: each listed with why.
    expect(await cancelRows({ batch, externalIds: ['NOT-THERE'] }, deps)).toEqual([expect.objectContaining({ external_id: 'NOT-THERE', cancelled: false, reason: `no row of batch ${batch} has this external_id` })]);
    expect(await cancelRows({ batch, externalIds: ['DEMO-001'] }, deps)).toEqual([expect.objectContaining({ external_id: 'DEMO-001', cancelled: false, reason: 'already final (paid)' })]);
    await client.close();
  });
});
