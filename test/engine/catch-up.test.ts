/**
 * [6] The service never sends again a webhook missed while paybatch was down.
 * So a start reads at once (within the polling rate) every row in flight whose
 * last news predates the downtime, instead of waiting for its next scheduled
 * read; and status says when each unsettled row will next be read.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { readStatus, renderStatus } from '../../src/engine/status.js';
import type { EngineContext } from '../helpers/engine.js';
import { debitsPerTransaction, engineContext, sqliteOf, template } from '../helpers/engine.js';
import { operator } from '../helpers/sandbox.js';

/** Reads ten minutes apart in the first hour: what D17 allows a live service. */
const SLOW_POLLING = { engine: { polling: { first_window_ms: 3_600_000, first_window_reads: 6, later_interval_ms: 3_600_000, reads_per_second: 50 } } };

describe('catch-up after downtime', () => {
  let ctx: EngineContext;
  afterEach(async () => ctx.stop());

  it('reads the rows in flight at once after a restart, so approvals missed while down are acted on now, not in ten minutes', async () => {
    ctx = await engineContext({ kyc: { mode: 'review', verify_after_ms: 600_000, approve_after_ms: 600_000 } });
    ctx.drop(template('templates/gbr-bank.csv'));
    // Until both are created and waiting on their senders (at most 20 s, for a busy machine).
    const bothCreated = (): boolean => sqliteOf(ctx.store).prepare("SELECT COUNT(*) FROM rows WHERE state = 'initial'").pluck().get() === 2;
    const first = await ctx.run(SLOW_POLLING, 20_000, {}, { endWhen: bothCreated });
    const batch = first.batches[0]?.batch as string;
    expect(first.batches[0]?.by_state).toEqual({ initial: 2 });

    const status = await readStatus(ctx.store, systemClock, batch);
    const next = status.batches[0]?.next_reads ?? [];
    expect(next.map((r) => r.external_id)).toEqual(['GBR-2026-0001', 'GBR-2026-0002']);
    for (const row of next) {
      const inMs = Date.parse(row.next_read_at as string) - Date.now();
      expect(inMs).toBeGreaterThan(9 * 60_000);
      expect(inMs).toBeLessThan(11 * 60_000);
    }
    expect(renderStatus(status)).toMatch(/next reads \(2 rows in flight at the service\):\n {4}line 2 {2}GBR-2026-0001 {2}initial {2}in (9|10)m \(/);

    // While paybatch is down, both senders are approved: the sender.approved webhooks go nowhere and are never sent again.
    for (const sender of ['SND-0001', 'SND-0002']) expect((await operator(ctx.sandbox, 'PUT', `/senders/${sender}/state`, { state: 'approved' })).status).toBe(200);
    const second = await ctx.run(SLOW_POLLING, 3000);
    // Read at once, found approved, funded (its next read is ten minutes away again: paid is learned then, or by webhook).
    expect(second.batches[0]?.by_state).toEqual({ pending: 2 });
    expect(debitsPerTransaction(ctx.sandbox).size).toBe(2);
    const catchUp = ctx.events.find((e) => e.event === 'catch_up_reads');
    expect(catchUp?.fields).toMatchObject({ rows: 2, reads_per_second: 50 });
  });
});
