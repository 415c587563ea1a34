/**
 * A read the service is slow to answer holds its own row only: `follow` starts
 * the reads that are due and returns without waiting for their answers, so the
 * next round reads the other rows on while that one is still at the service,
 * and never reads the held row again beside it. Before, a round waited for its
 * slowest read (up to service.timeout_ms) before the next could start, and the
 * loops that call it (run's, watch's: results, schedules, settling) with it.
 * The real Pipeline, a real SQLite file, the real sandbox over HTTP behind a tap
 * that holds the first read until the test lets it go: by event, not by a delay.
 */
import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { PayoutClient } from '../../src/api/client.js';
import { configSchema } from '../../src/config/config.js';
import { Pipeline } from '../../src/engine/pipeline.js';
import { takeInboxFile } from '../../src/engine/run.js';
import type { EngineContext } from '../helpers/engine.js';
import { FAST_ENGINE, FAST_INTAKE, IN_FLIGHT_SANDBOX, gbrRowsBatch, sqliteOf } from '../helpers/engine.js';
import { gate } from '../helpers/gates.js';
import type { ServiceTap } from '../helpers/service-tap.js';
import { engineBehindTap } from '../helpers/service-tap.js';


describe('following: a slow read holds its own row, not the round after it', () => {
  let ctx: EngineContext;
  let tap: ServiceTap;
  let client: PayoutClient;
  afterEach(async () => {
    await client.close();
    await ctx.stop();
  });

  it('the next round reads the other row while the first read is held; the held row is not read twice; its answer is recorded once let go', { timeout: 30_000 }, async () => {
    ({ ctx, tap } = await engineBehindTap(IN_FLIGHT_SANDBOX));
    // A read held at the tap waits for the test, however busy the machine, not for the helper's two-second timeout.
    client = ctx.client({ timeoutMs: 120_000 });
    const config = configSchema.parse({ intake: FAST_INTAKE, engine: FAST_ENGINE });
    ctx.drop(gbrRowsBatch(ctx.dir, 'two.csv', ['SLOW-1', 'SLOW-2']));
    const inbox = ctx.workspace.folders.inbox;
    const name = readdirSync(inbox).find((n) => n.endsWith('.csv')) as string;
    let batch = '';
    for (let look = 0; batch === '' && look < 10; look++) {
      const outcome = await takeInboxFile(`${inbox}/${name}`, { workspace: ctx.workspace, store: ctx.store, config, clock: ctx.clock, log: () => {}, stableMs: 0 });
      if (outcome.kind === 'accepted') batch = outcome.batch;
      else ctx.advanceClock(1_000);
    }
    expect(batch).not.toBe('');
    await ctx.store.releaseBatch(batch);
    const pipeline = new Pipeline({ store: ctx.store, client, clock: ctx.clock, engine: config.engine, log: () => {} });
    await pipeline.submit(batch);
    const reads = (): { line: number; reads: number }[] =>
      sqliteOf(ctx.store).prepare('SELECT line, reads FROM rows WHERE batch_id = ? ORDER BY line').all(batch) as { line: number; reads: number }[];
    expect(sqliteOf(ctx.store).prepare("SELECT COUNT(*) AS n FROM rows WHERE batch_id = ? AND phase = 'funded'").get(batch)).toEqual({ n: 2 });
    const before = reads();

    const letGo = gate();
    const firstHeld = gate();
    tap.decide = (call, n) => {
      if (call !== 'read' || n !== 1) return { at: 'pass' };
      firstHeld.open();
      return { at: 'held', until: letGo.opened };
    };
    tap.reset();
    ctx.advanceClock(60_000);
    // Both reads started; the call returns with the first still held at the service.
    expect(await pipeline.follow()).toBe(2);
    await firstHeld.opened;
    const answered = async (line: number, count: number): Promise<void> => {
      for (;;) {
        if ((reads().find((r) => r.line === line)?.reads ?? 0) >= count) return;
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    // The other row's read is answered and recorded while the first is held.
    const other = await (async () => {
      for (;;) {
        const moved = reads().find((r, i) => r.reads > (before[i]?.reads ?? 0));
        if (moved) return moved.line;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const held = (before.find((r) => r.line !== other) as { line: number }).line;
    // The next round: only the other row is read again; the held one is not read beside its first read.
    ctx.advanceClock(60_000);
    expect(await pipeline.follow()).toBe(1);
    await answered(other, (before.find((r) => r.line === other)?.reads ?? 0) + 2);
    expect(tap.counts.read).toBe(3);
    expect(reads().find((r) => r.line === held)?.reads).toBe(before.find((r) => r.line === held)?.reads);

    letGo.open();
    await pipeline.idle();
    expect(reads().find((r) => r.line === held)?.reads).toBe((before.find((r) => r.line === held)?.reads ?? 0) + 1);
    expect(tap.counts.read).toBe(3);
  });
});
