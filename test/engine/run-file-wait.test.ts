/**
 * `run` and a file whose last write ended mid-line and then completed: looked
 * at again when it changes, so it is taken a stability interval after it is
 * whole (before: the next look was put off to the end of the four-times-longer
 * wait, and a file completed 4 s after its stall was taken 71 s later). On the
 * engine's clock (ManualClock), moved on by run's own sleeps: no test waits.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import { runOnce } from '../../src/engine/run.js';
import type { EngineContext } from '../helpers/engine.js';
import { FAST_ENGINE, engineContext, template } from '../helpers/engine.js';

const STABLE_MS = 15_000;

describe('run: a file cut mid-line, then completed', () => {
  let ctx: EngineContext;
  afterEach(async () => ctx.stop());

  it('is taken a stability interval after it is whole, and run says what it waits for meanwhile', async () => {
    const clock = new ManualClock(Date.now());
    ctx = await engineContext({}, { clock });
    const text = readFileSync(template('templates/gbr-bank.csv'), 'utf8');
    const cut = text.indexOf('\n', text.indexOf('\n') + 1) + 5;
    const file = join(ctx.workspace.folders.inbox, 'pay.csv');
    writeFileSync(file, text.slice(0, cut));
    const start = clock.now();
    let completedAt: number | null = null;
    let takenAt: number | null = null;
    const said: string[] = [];
    const client = ctx.client();
    try {
      await runOnce({
        workspace: ctx.workspace, store: ctx.store, client, clock, waitMs: 40_000, tickMs: 1000,
        config: configSchema.parse({ intake: { stable_ms: STABLE_MS }, engine: FAST_ENGINE }),
        log: (event) => {
          if (event === 'intake_accepted' && takenAt === null) takenAt = clock.now();
        },
        say: (line) => said.push(line),
        // Run's waits move the engine's clock on; the writer finishes the file 4 s after its stall.
        sleep: async (ms) => {
          clock.advance(ms);
          if (completedAt === null && clock.now() - start >= 4_000) {
            appendFileSync(file, text.slice(cut));
            completedAt = clock.now();
          }
        },
      });
    } finally {
      await client.close();
    }
    expect(completedAt).not.toBeNull();
    expect(takenAt).not.toBeNull();
    // Whole at about 4 s: taken once unchanged for the interval, looked at again within a second of each change.
    expect((takenAt as unknown as number) - (completedAt as unknown as number)).toBeLessThanOrEqual(STABLE_MS + 1_000);
    expect(said[0]).toMatch(/^waiting until \d\d:\d\d:\d\d for inbox\/pay\.csv to end whole and stay unchanged \(its last line has no line end yet; once it is whole, write pay\.csv\.done to take it at once\)$/);
    expect(said[1]).toMatch(/^waiting until \d\d:\d\d:\d\d for inbox\/pay\.csv to stay unchanged \(no completion marker; write pay\.csv\.done to take it at once\)$/);
  });
});
