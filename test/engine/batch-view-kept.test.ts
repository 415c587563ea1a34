/**
 * A batch's view on the console (its rows counted by state and reason) is made
 * as the batch settles and kept, so that the first look at a settled batch,
 * however large, reads one record instead of walking its rows (issue 42).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { batchStatus } from '../../src/console/console-data.js';
import { viewBasis } from '../../src/engine/batch-view.js';
import type { EngineContext } from '../helpers/engine.js';
import { engineContext, sqliteOf, template } from '../helpers/engine.js';

describe('the console\'s view of a batch, kept at settlement', () => {
  let ctx: EngineContext;
  afterEach(async () => ctx.stop());

  it('is in the store once the batch settles, before anyone looks, and the first look reads it rather than the rows', async () => {
    ctx = await engineContext();
    ctx.drop(template('templates/gbr-bank.csv'), 'gbr.csv');
    const report = await ctx.run();
    const batch = report.batches[0];
    expect(batch).toMatchObject({ status: 'settled', unsettled: 0 });
    const id = batch?.batch as string;
    const record = await ctx.store.batch(id);
    const kept = await ctx.store.keptBatchSummary(id);
    expect(kept?.basis).toBe(viewBasis(record!));
    const rows = await ctx.results(id);
    const view = JSON.parse(kept!.summary) as { states: Record<string, number> };
    expect(view.states).toEqual({ paid: rows.length });
    // A row changed behind the engine's back moves nothing the basis is made of: a look that walked the rows would
    // count it, the kept view does not. (A change the engine learns moves the basis: see batch-pages.test.ts.)
    sqliteOf(ctx.store).prepare("UPDATE rows SET state = 'failed' WHERE batch_id = ? AND line = 2").run(id);
    expect((await batchStatus(ctx.store, ctx.clock, id))?.states).toEqual({ paid: rows.length });
  });
});
