/**
 * `paybatch cancel` follows the rows it cancelled until they end or its wait
 * runs out, with its reads in the background of its loop (Pipeline.follow):
 * what it reports (state_after) must take in the reads still at the service
 * when the wait ran out. The reads are held at a tap until the loop has ended
 * (the engine's clock past the wait), then answered: by event, not by a delay.
 * Real sandbox over HTTP, real SQLite.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/config.js';
import { cancelRows } from '../../src/engine/cancel.js';
import type { EngineContext } from '../helpers/engine.js';
import { FAST_ENGINE, IN_FLIGHT_SANDBOX, template } from '../helpers/engine.js';
import { gate } from '../helpers/gates.js';
import type { ServiceTap } from '../helpers/service-tap.js';
import { engineBehindTap } from '../helpers/service-tap.js';

describe('paybatch cancel, its reads under way when its wait ends', () => {
  let ctx: EngineContext;
  let tap: ServiceTap;
  afterEach(async () => {
    await ctx.stop();
  });

  it('reports the state the last reads brought, not the one before them', { timeout: 30_000 }, async () => {
    // Funded payouts stay pending (not cleared) for ten minutes: cancellable [D11].
    ({ ctx, tap } = await engineBehindTap({ ...IN_FLIGHT_SANDBOX, payout: { ...IN_FLIGHT_SANDBOX.payout, clearing_ms: 600_000 } }));
    ctx.drop(template('templates/eur-iban-bank.csv'), 'eur.csv');
    const funded = (): boolean => (ctx.store as unknown as { db: { prepare(sql: string): { get(): { n: number } } } }).db.prepare("SELECT COUNT(*) AS n FROM rows WHERE phase = 'funded'").get().n === 3;
    const run = await ctx.run({}, 60_000, {}, { endWhen: funded });
    const batch = run.batches[0]?.batch as string;
    expect(funded()).toBe(true);

    const answerReads = gate();
    // The reads after the cancellation was sent (DELETE): those that follow the row to its end.
    let sent = false;
    let followed = 0;
    tap.decide = (call) => {
      if (call === 'other') sent = true;
      if (call !== 'read' || !sent) return { at: 'pass' };
      followed += 1;
      return { at: 'held', until: answerReads.opened };
    };
    const pauses: number[] = [];
    // The held reads wait for the loop to end, however busy the machine, not for the helper's two-second timeout.
    const client = ctx.client({ timeoutMs: 120_000 });
    const waitMs = 60_000;
    const from = ctx.clock.now();
    try {
      const lines = await cancelRows({ batch, externalIds: ['EUR-2026-0001'] }, {
        store: ctx.store, client, clock: ctx.clock, engine: configSchema.parse({ engine: FAST_ENGINE }).engine, log: () => {}, waitMs,
        // Each wait moves the engine's clock on by its length; once past the wait, the loop ends and the reads are answered.
        sleep: async (ms) => {
          pauses.push(ms);
          ctx.advanceClock(ms);
          if (ctx.clock.now() >= from + waitMs) answerReads.open();
          await new Promise((resolve) => setImmediate(resolve));
        },
      });
      // One read follows the row (held until the wait ended: never read again beside itself), its round paced by the
      // polling budget (FAST_ENGINE: 500 reads a second, so 2 ms for one read); a round that read nothing waits 200 ms.
      expect(followed).toBe(1);
      expect(pauses.filter((ms) => ms !== 200)).toEqual([2]);
      expect(lines.map((l) => [l.external_id, l.cancelled, l.state_after])).toEqual([['EUR-2026-0001', true, expect.stringMatching(/^(canceled|refunded)$/)]]);
    } finally {
      await client.close();
    }
  });
});
