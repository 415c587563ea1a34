/**
 * Ids of the correction form (`X~R1`) are reserved for corrections, wherever
 * they come from: a plain batch row carrying one (no original_batch and
 * original_line) is refused for that row and never sent, against the real
 * sandbox over HTTP and a real SQLite file (finding 9 of the security issue).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineContext } from '../helpers/engine.js';
import { engineContext, gbrRowsBatch } from '../helpers/engine.js';

describe('correction ids in a plain batch', () => {
  let ctx: EngineContext;
  afterEach(async () => ctx.stop());

  it('refuses a plain row whose external_id has the correction form, and pays the rest of the file', { timeout: 60_000 }, async () => {
    ctx = await engineContext();
    ctx.drop(gbrRowsBatch(ctx.dir, 'plain.csv', ['KC-000002', 'KC-000002~R1', 'KC-000003~R7']), 'plain.csv');
    const run = await ctx.run({ batch: { invalid_rows: 'skip_invalid' } }, 3000);
    const batch = run.batches[0]?.batch as string;
    const results = await ctx.results(batch);
    expect(results.map((r) => [r.external_id, r.state])).toEqual([['KC-000002', 'paid'], ['KC-000002~R1', 'invalid'], ['KC-000003~R7', 'invalid']]);
    const refused = results.find((r) => r.external_id === 'KC-000002~R1') as Record<string, string>;
    expect(refused.error).toMatch(/^external_id: correction_id_reserved: external_id KC-000002~R1 has the form of a correction of KC-000002/);
    const stored = await ctx.store.row(batch, 3);
    expect(stored).toMatchObject({ phase: 'invalid', external_id: 'KC-000002~R1' });
    // Never sent: the service has no payout of that id, nor of the other.
    expect(ctx.sandbox.store.transactionByExternalId('KC-000002~R1')).toBeUndefined();
    expect(ctx.sandbox.store.transactionByExternalId('KC-000003~R7')).toBeUndefined();
  });
});
