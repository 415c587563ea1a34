/**
 * engine.loop_ms: how long `run` waits between rounds of its loop (the reads due,
 * stalled steps, batches that ended). The configured length is the wait, the
 * default a second; the reads' budget may make a wait longer, never shorter.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/config.js';
import { runOnce } from '../../src/engine/run.js';
import type { EngineContext } from '../helpers/engine.js';
import { engineContext, FAST_ENGINE, FAST_INTAKE, template } from '../helpers/engine.js';

describe('the loop of run, between its rounds', () => {
  let ctx: EngineContext;
  afterEach(async () => ctx.stop());

  /** The waits of one run that follows a small batch to its end, each moving the engine's clock on by its length. */
  async function waitsOfRun(engine: Record<string, unknown>): Promise<number[]> {
    ctx = await engineContext({ payout: { clearing_ms: 5, quick_ms: 5, delay_ms: [60, 80], slow_delay_ms: [60, 80], error_retry_ms: 50, cancel_ms: 5, refund_ms: 5 } });
    ctx.drop(template('templates/gbr-bank.csv'), 'gbr-bank.csv');
    const config = configSchema.parse({ intake: FAST_INTAKE, engine: { polling: FAST_ENGINE.polling, ...engine } });
    const waits: number[] = [];
    const client = ctx.client();
    try {
      const report = await runOnce({
        workspace: ctx.workspace, store: ctx.store, client, config, clock: ctx.clock, log: () => {}, waitMs: 600_000,
        // The payouts end in real time at the sandbox (60 to 80 ms): each wait really waits 20 ms, and moves the engine's clock on by all of it.
        sleep: async (ms) => {
          waits.push(ms);
          ctx.advanceClock(ms);
          await new Promise((resolve) => setTimeout(resolve, 20));
        },
      });
      expect(report.batches.map((b) => b.status)).toEqual(['settled']);
    } finally {
      await client.close();
    }
    return waits;
  }

  // The file's own waits come first (intake.stable_ms, 30 ms here, and a look at the file); every wait after them is the loop's.
  const loopWaits = (waits: number[]): number[] => waits.filter((ms) => ms > 50);

  it('waits engine.loop_ms between rounds', async () => {
    const waits = loopWaits(await waitsOfRun({ loop_ms: 321 }));
    expect(waits.length).toBeGreaterThan(0);
    expect(new Set(waits)).toEqual(new Set([321]));
  });

  it('a second when it is not set', async () => {
    const waits = loopWaits(await waitsOfRun({}));
    expect(waits.length).toBeGreaterThan(0);
    expect(new Set(waits)).toEqual(new Set([1000]));
  });
});
