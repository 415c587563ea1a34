/**
 * The webhook events' applier when its store fails (the database went away): the
 * pass is given up and said in the log, its events stay stored for the next
 * pass; nothing is left to reject unheard, which ended the daemon's process.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import type { ApplierDeps } from '../../src/watch/event-applier.js';
import { EventApplier } from '../../src/watch/event-applier.js';

describe('EventApplier', () => {
  it('a pass whose store fails is logged and given up; the next notify applies again', async () => {
    const logs: { event: string; fields: Record<string, unknown> }[] = [];
    let reachable = false;
    let passes = 0;
    const store = {
      unappliedWebhookEvents: async () => {
        passes += 1;
        if (!reachable) throw new Error('the database cannot be reached (read ECONNRESET)');
        return [];
      },
    } as unknown as ApplierDeps['store'];
    const applier = new EventApplier({ store, pipeline: {} as ApplierDeps['pipeline'], clock: new ManualClock(0), log: (event, fields) => logs.push({ event, fields }) });
    applier.notify();
    await applier.idle();
    expect(logs).toEqual([{ event: 'webhook_apply_deferred', fields: { reason: 'the database cannot be reached (read ECONNRESET)' } }]);
    reachable = true;
    applier.notify();
    await applier.idle();
    expect(passes).toBe(2);
    expect(logs).toHaveLength(1);
  });
});
