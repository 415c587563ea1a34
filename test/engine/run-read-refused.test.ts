/**
 * `run`'s reads go on in the background of its loop (Pipeline.follow): a read
 * the service answers 401 (credentials refused) must still stop the run with
 * that refusal (the CLI's exit 77), not be lost while the loop waits out its
 * --wait. Real sandbox over HTTP behind a tap that refuses every read.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AuthenticationRefused } from '../../src/api/errors.js';
import type { EngineContext } from '../helpers/engine.js';
import { IN_FLIGHT_SANDBOX, template } from '../helpers/engine.js';
import type { ServiceTap } from '../helpers/service-tap.js';
import { engineBehindTap } from '../helpers/service-tap.js';


describe('run: a read refused in the background', () => {
  let ctx: EngineContext;
  let tap: ServiceTap;
  afterEach(async () => {
    await ctx.stop();
  });

  it('stops the run with the refusal, after the rows were created and funded, and tells it in the log', { timeout: 30_000 }, async () => {
    ({ ctx, tap } = await engineBehindTap(IN_FLIGHT_SANDBOX));
    tap.decide = (call) => (call === 'read' ? { at: 'refused', until: Promise.resolve() } : { at: 'pass' });
    ctx.drop(template('templates/eur-iban-bank.csv'), 'eur.csv');
    // A wait of ten minutes on the run's own clock: only the refusal can end it before.
    await expect(ctx.run({}, 600_000)).rejects.toBeInstanceOf(AuthenticationRefused);
    expect(tap.counts.fund).toBe(3);
    expect(ctx.events.some((e) => e.event === 'read_failed')).toBe(true);
  });
});
