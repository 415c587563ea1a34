/**
 * The claim (ready -> creating) records paybatch's clock as the row's
 * created_at, before any transaction exists. What that means for the readers
 * of rows.created_at, end to end: the real engine (`run`), a real SQLite file,
 * the real sandbox over HTTP behind the lying proxy.
 *
 * - A create the service refuses (422): the row ends rejected_by_service, with
 *   no transaction, and its created_at is the claim. Status, the day's
 *   reconciliation and the results do not take it for a transaction or a
 *   refusal of paybatch's; nor do the chaos run's invariants (they counted
 *   every row with a created_at as a transaction before).
 * - A row left being created (the service unreachable): status counts how long
 *   it has been in flight from the claim, not from the batch's arrival;
 *   `paybatch cancel` says it is not created yet; the results say not_sent_yet.
 */
import { describe, expect, it } from 'vitest';
import type { Collected } from '../../chaos/invariants.js';
import { checkInvariants } from '../../chaos/invariants.js';
import { systemClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import { cancelRows } from '../../src/engine/cancel.js';
import { readStatus } from '../../src/engine/status.js';
import { reconcile } from '../../src/reports/reconciliation.js';
import type { PipelineRow } from '../../src/store/port.js';
import type { EngineContext } from '../helpers/engine.js';
import { backdateClaim, gbrRowsBatch, sqliteOf } from '../helpers/engine.js';
import { PATHS, answer, engineBehindLiar, rule } from '../helpers/lying-service.js';

const HOUR = 3_600_000;

describe('created_at recorded at the claim, before any transaction exists', () => {
  const setting = engineBehindLiar();

  /** One row whose create the service answers 422 (a field of the recipient): rejected_by_service, no transaction. */
  async function refusedOnCreate(): Promise<{ ctx: EngineContext; row: PipelineRow; batch: string; before: number; after: number }> {
    const { ctx, liar } = setting;
    liar.lie(rule('POST', PATHS.create, answer(422, { errors: { 'recipient.iban': ['is invalid'] } })));
    ctx.drop(gbrRowsBatch(ctx.dir, 'one.csv', ['REFUSED-1']));
    const before = ctx.clock.now(); // the engine's time (a manual clock), as the claim records it
    const batch = (await ctx.run({}, 5000)).batches[0]?.batch as string;
    const after = ctx.clock.now();
    const row = await ctx.store.row(batch, 2) as PipelineRow;
    return { ctx, row, batch, before, after };
  }

  it('a create the service refuses: final rejected_by_service, no transaction, created_at the claim; not in flight, not a refusal of paybatch\'s in the day', async () => {
    const { ctx, row, batch, before, after } = await refusedOnCreate();
    expect(row).toMatchObject({ phase: 'final', outcome: 'rejected_by_service', transaction_id: null, funded_at: null });
    expect([...ctx.sandbox.store.allTransactions()]).toEqual([]);
    // The claim's time stays: nothing adopted a transaction after it.
    const created = Date.parse(row.created_at as string);
    expect(created).toBeGreaterThanOrEqual(before);
    expect(created).toBeLessThanOrEqual(after);

    const status = (await readStatus(ctx.store, systemClock, batch)).batches[0];
    expect(status).toMatchObject({ unsettled: 0, oldest_unsettled_age_s: null, attention: [] });

    // The day's reconciliation: the row moved no money and is not one of paybatch's refusals.
    const day = new Date(created).toISOString().slice(0, 10);
    const period = { label: day, from: `${day}T00:00:00.000Z`, to: new Date(Date.parse(`${day}T00:00:00.000Z`) + 24 * HOUR).toISOString() };
    const rec = reconcile(await ctx.store.ledgerRows({ from: period.from, to: period.to }), period, { inFlightDays: 3 });
    expect(rec.movements).toEqual([]);
    expect(rec.exceptions).toEqual([]);

    const [result] = await ctx.results(batch);
    expect(result).toMatchObject({ external_id: 'REFUSED-1', transaction_id: '', state_reason_code: 'rejected_by_service' });
  });

  // Found by review: chaos/invariants.ts took `created_at !== null` to mean "a transaction was created", and since the
  // claim records created_at, a row the service refused on create was counted as one ("1 transactions" where the
  // service made none; the verdict unchanged, such a row has 0 reads). It now counts rows with a transaction_id.
  it('the chaos run\'s invariants do not count a row the service refused on create as a transaction', async () => {
    const { ctx, batch } = await refusedOnCreate();
    // The same columns chaos/run.ts reads (FINAL_ROW_COLUMNS).
    const rows = sqliteOf(ctx.store).prepare('SELECT batch_id, line, external_id, transaction_id, phase, state, reads, created_at FROM rows WHERE batch_id = ?')
      .all(batch) as Collected['rows'];
    const collected: Collected = {
      rowsIn: 1, rowsInResults: 1, serviceExternalIds: [], ledger: [], balancesBefore: {}, balancesAfter: {}, rows, differences: 0, unexplainedDifferences: 0, seconds: 1,
      polling: { first_window_ms: 60_000, first_window_reads: 12, later_interval_ms: 10_000 }, endedAt: Date.now(),
    };
    const reads = checkInvariants(collected, 0).find((c) => c.name === 'reads per transaction within the polling budget');
    expect(reads?.figure).toMatch(/^0 transactions/);
  });

  it('a row left being created (the service unreachable): in flight since its claim for status, not cancellable, not sent yet in the results', async () => {
    const { ctx, liar } = setting;
    liar.lie(rule('POST', PATHS.create, answer(503, { errors: ['service trouble'] })));
    liar.lie(rule('GET', PATHS.lookup, answer(503, { errors: ['service trouble'] })));
    ctx.drop(gbrRowsBatch(ctx.dir, 'one.csv', ['SLOW-1']));
    const batch = (await ctx.run({}, 1500)).batches[0]?.batch as string;
    const row = await ctx.store.row(batch, 2) as PipelineRow;
    expect(row).toMatchObject({ phase: 'creating', transaction_id: null });
    expect(row.created_at).not.toBeNull();
    expect([...ctx.sandbox.store.allTransactions()]).toEqual([]);
    expect((await ctx.results(batch))[0]).toMatchObject({ external_id: 'SLOW-1', state: 'not_sent_yet', transaction_id: '' });

    // Claimed three hours ago (a crash, a restart late): status counts from the claim, the batch's arrival being later.
    backdateClaim(ctx.store, batch, 2, new Date(Date.now() - 3 * HOUR).toISOString());
    const status = (await readStatus(ctx.store, systemClock, batch)).batches[0];
    expect(status?.unsettled).toBe(1);
    expect(status?.oldest_unsettled_age_s).toBeGreaterThanOrEqual(3 * 3600 - 5);
    expect(status?.oldest_unsettled_age_s).toBeLessThan(3 * 3600 + 60);

    const client = ctx.client();
    try {
      const lines = await cancelRows({ batch, externalIds: ['SLOW-1'] }, {
        store: ctx.store, client, clock: systemClock, engine: configSchema.parse({}).engine, log: () => {}, waitMs: 0,
      });
      expect(lines).toEqual([expect.objectContaining({ external_id: 'SLOW-1', cancelled: false, reason: 'not created at the service yet; nothing to cancel' })]);
    } finally {
      await client.close();
    }
    expect((await ctx.store.row(batch, 2))?.phase).toBe('creating');
  });
});
