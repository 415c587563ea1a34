/**
 * The races of a row, reproduced on a manual clock against a real SQLite store:
 * a webhook against a poll, a poll against a funding, a lost fund answer
 * against the funding deadline. The decision is pure and the store applies it
 * by compare-and-set, so whichever order the answers arrive in, nothing moves
 * back, nothing is funded twice and nothing being funded is cancelled.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ServiceTransaction } from '../../src/api/answers.js';
import { parseTransaction } from '../../src/api/answers.js';
import type { PayoutClient } from '../../src/api/client.js';
import { OutcomeUnknown } from '../../src/api/errors.js';
import type { PayoutRequest } from '../../src/api/payout-request.js';
import { ManualClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import { policyOf } from '../../src/engine/pipeline.js';
import { firstInterval } from '../../src/engine/read-schedule.js';
import { readStatus } from '../../src/engine/status.js';
import { RowSteps } from '../../src/engine/steps.js';
import type { PipelineRow } from '../../src/store/port.js';
import type { Phase, TxState } from '../../src/payout-states.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';

const REQUEST: PayoutRequest = {
  external_id: 'RACE-1', type: 'bank', input_currency_code: 'USD', output_currency_code: 'GBP', output_amount_in_cents: '79120',
  sender: { external_id: 'S-1' }, recipient: { country_code: 'GBR' },
};

/** The service's transaction as the row's own, in a state, at a time. */
function tx(state: string, updatedAt: string | null, extra: Record<string, unknown> = {}): ServiceTransaction {
  return parseTransaction({
    id: 'tr_1', external_id: 'RACE-1', state, may_cancel: true, input_amount_in_cents: '100000', input_currency: 'USD',
    output_amount_in_cents: '79120', output_currency: 'GBP', ...(updatedAt === null ? {} : { updated_at: updatedAt }), ...extra,
  }) as ServiceTransaction;
}

/** A client that records every call and answers reads from a queue: no network, the decision is what is tested. */
function recordingClient(reads: ServiceTransaction[] = []) {
  const calls: string[] = [];
  const client = {
    async getTransaction(id: string) {
      calls.push(`GET ${id}`);
      const next = reads.shift();
      if (!next) throw new Error('no read queued');
      return next;
    },
    async fundTransaction(id: string) {
      calls.push(`FUND ${id}`);
      return tx('pending', '2026-01-05T09:00:30.000Z');
    },
    async cancelTransaction(id: string) {
      calls.push(`DELETE ${id}`);
      return tx('approved', '2026-01-05T09:00:00.000Z');
    },
  };
  return { client: client as unknown as PayoutClient, calls };
}

describe('races of one row, on a manual clock', () => {
  let dir: string;
  let store: SqliteStore;
  let clock: ManualClock;
  const engine = configSchema.parse({ engine: { funding_deadline_ms: 600_000 } }).engine;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'paybatch-races-'));
    store = SqliteStore.open(join(dir, 'paybatch.db'));
    clock = new ManualClock('2026-01-05T09:00:00.000Z');
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const steps = (client: PayoutClient): RowSteps => new RowSteps({
    store, client, clock, policy: policyOf(engine), log: () => {}, limits: () => ({}), onBalanceExhausted: async () => {}, onUnapprovedRow: async () => {},
  });

  /** One row of an accepted batch, moved to `phase` with the transaction last seen in `state`. */
  async function rowIn(phase: Phase, state: TxState, observedAt: string | null, funded = false): Promise<PipelineRow> {
    const batch = await store.beginBatch({ file_name: 'race.csv', sha256: 'a'.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: '2026-01-05T08:59:00.000Z', file_mtime_ms: null, send_after: 0 });
    await store.addRows(batch, [{ line: 2, external_id: 'RACE-1', request: REQUEST, errors: [] }]);
    await store.acceptBatch(batch);
    const ready = (await store.row(batch, 2)) as PipelineRow;
    await store.commitRow(batch, 2, ready.revision, { changes: {
      phase, transaction_id: 'tr_1', state, observed_at: observedAt, input_amount: '100000', created_at: '2026-01-05T09:00:00.000Z',
      funded_at: funded ? '2026-01-05T09:00:10.000Z' : null,
    } });
    return (await store.row(batch, 2)) as PipelineRow;
  }

  it('a webhook newer than a poll wins, whichever lands first; the older one changes nothing', async () => {
    const row = await rowIn('funded', 'pending', '2026-01-05T09:00:10.000Z', true);
    const { client, calls } = recordingClient();
    expect(await steps(client).observe(row, tx('processing', '2026-01-05T09:00:20.000Z'), 'webhook')).toBe('applied');
    // The poll's answer was read before the webhook landed, and arrives after: older, so nothing moves.
    expect(await steps(client).observe(row, tx('pending', '2026-01-05T09:00:15.000Z'), 'read')).toBe('stale');
    expect(await store.row(row.batch_id, 2)).toMatchObject({ phase: 'funded', state: 'processing', observed_at: '2026-01-05T09:00:20.000Z' });
    // An undated observation never replaces a dated one.
    expect(await steps(client).observe(row, tx('received', null), 'webhook')).toBe('stale');
    expect((await store.row(row.batch_id, 2))?.state).toBe('processing');
    expect(calls).toEqual([]);
  });

  it('a poll that saw a state before funding cannot cancel the row a funding has moved on, even past the deadline', async () => {
    const created = await rowIn('created', 'approved', '2026-01-05T09:00:00.000Z');
    // The funding step reserved the row (created -> funding) after the poll read it.
    await store.commitRow(created.batch_id, 2, created.revision, { changes: { phase: 'funding', fund_attempts: 1 } });
    clock.advance(engine.funding_deadline_ms + 1);
    const { client, calls } = recordingClient();
    // The poll decides from its stale copy of the row: the compare-and-set refuses, the decision is made again from the store.
    await steps(client).observe(created, tx('approved', '2026-01-05T09:00:00.000Z'), 'read');
    expect(await store.row(created.batch_id, 2)).toMatchObject({ phase: 'funding', outcome: null });
    expect(calls).toEqual([]);
  });

  it('a lost fund answer is resolved by reading: funded if the read shows it, never funded again past the deadline', async () => {
    const funding = await rowIn('funding', 'approved', '2026-01-05T09:00:00.000Z');
    const seenFunded = recordingClient([tx('pending', '2026-01-05T09:00:05.000Z')]);
    await steps(seenFunded.client).resolveFunding(funding);
    expect(await store.row(funding.batch_id, 2)).toMatchObject({ phase: 'funded', state: 'pending' });
    expect(seenFunded.calls).toEqual(['GET tr_1']);

    const other = await rowInFresh('funding');
    clock.advance(engine.funding_deadline_ms + 1);
    const notFunded = recordingClient([tx('approved', '2026-01-05T09:00:00.000Z')]);
    await steps(notFunded.client).resolveFunding(other);
    expect(await store.row(other.batch_id, 2)).toMatchObject({ phase: 'cancelling', outcome: 'funding_deadline' });
    expect(notFunded.calls).toEqual(['GET tr_1', 'DELETE tr_1']);
  });

  it('a webhook or a poll of a row being funded only moves it forward: an approved state leaves the funding to its owner', async () => {
    const funding = await rowIn('funding', 'approved', '2026-01-05T09:00:00.000Z');
    const { client, calls } = recordingClient();
    await steps(client).observe(funding, tx('approved', '2026-01-05T09:00:01.000Z'), 'webhook');
    expect((await store.row(funding.batch_id, 2))?.phase).toBe('funding');
    // paid arrives before the fund answer: funded and final; the fund answer, older, then changes nothing.
    await steps(client).observe((await store.row(funding.batch_id, 2)) as PipelineRow, tx('paid', '2026-01-05T09:01:00.000Z'), 'webhook');
    const paid = (await store.row(funding.batch_id, 2)) as PipelineRow;
    expect(paid).toMatchObject({ phase: 'final', state: 'paid' });
    expect(paid.funded_at).not.toBeNull();
    expect(await steps(client).observe(paid, tx('pending', '2026-01-05T09:00:30.000Z'), 'fund')).toBe('after_final');
    expect(await store.row(funding.batch_id, 2)).toMatchObject({ phase: 'final', state: 'paid', funded_at: paid.funded_at });
    expect(calls).toEqual([]);
  });

  it('a final state never moves back, whatever the time on a later observation', async () => {
    const paid = await rowIn('final', 'paid', '2026-01-05T09:05:00.000Z', true);
    const { client } = recordingClient();
    expect(await steps(client).observe(paid, tx('processing', '2026-01-05T10:00:00.000Z'), 'webhook')).toBe('after_final');
    expect(await store.row(paid.batch_id, 2)).toMatchObject({ phase: 'final', state: 'paid' });
  });

  it('a funded row being cancelled still counts against the batch budget until its refund', async () => {
    const batch = await store.beginBatch({ file_name: 'budget.csv', sha256: 'b'.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: '2026-01-05T08:59:00.000Z', file_mtime_ms: null, send_after: 0 });
    await store.addRows(batch, [2, 3].map((line) => ({ line, external_id: `BUDGET-${line}`, request: { ...REQUEST, external_id: `BUDGET-${line}` }, errors: [] })));
    await store.acceptBatch(batch);
    const first = (await store.row(batch, 2)) as PipelineRow;
    await store.commitRow(batch, 2, first.revision, { changes: { phase: 'cancelling', outcome: 'cancelled_on_request', transaction_id: 'tr_a', input_amount: '60000', funded_at: '2026-01-05T09:00:10.000Z' } });
    const second = (await store.row(batch, 3)) as PipelineRow;
    const reserve = (budget: bigint) => store.commitRow(batch, 3, second.revision, { changes: { phase: 'funding' }, reserve: { currency: 'USD', amount: 50_000n, budget } });
    expect(await reserve(109_999n)).toEqual({ kind: 'over_budget', committed: 60_000n });
    expect((await store.row(batch, 3))?.phase).toBe('ready');
    expect(await reserve(110_000n)).toEqual({ kind: 'applied' });
    // The same revision again: the row moved, nothing is applied twice.
    expect(await reserve(110_000n)).toEqual({ kind: 'moved' });
  });

  const stepsWith = (client: Partial<PayoutClient>): RowSteps => new RowSteps({
    store, client: client as PayoutClient, clock, policy: policyOf(engine), log: () => {}, limits: () => ({}), onBalanceExhausted: async () => {}, onUnapprovedRow: async () => {},
  });

  it('a webhook "canceled" landing during the fund call does not end the row: the fund call\'s 200 is recorded as funding', async () => {
    const created = await rowIn('created', 'approved', '2026-01-05T09:00:00.000Z');
    const calls: string[] = [];
    const steps: RowSteps = stepsWith({
      async fundTransaction(id: string) {
        calls.push(`FUND ${id}`);
        // While the call is in flight, a (lying or reordered) webhook says canceled, newer than what the row knows.
        const now = (await store.row(created.batch_id, 2)) as PipelineRow;
        await steps.observe(now, tx('canceled', '2026-01-05T09:00:20.000Z'), 'webhook');
        // The service then answers 200 to paybatch's own funding: proof of funding [D10].
        return tx('pending', '2026-01-05T09:00:10.000Z');
      },
      async cancelTransaction() { calls.push('DELETE'); return tx('canceled', '2026-01-05T09:00:20.000Z'); },
      async getTransaction() { calls.push('GET'); return tx('pending', '2026-01-05T09:00:10.000Z'); },
    });
    await steps.observe(created, tx('approved', '2026-01-05T09:00:01.000Z'), 'read');
    const after = (await store.row(created.batch_id, 2)) as PipelineRow;
    expect(calls).toContain('FUND tr_1');
    // Money left the balance (200 to our fund): the row must record it, or be held for a person; never "canceled, not funded".
    expect(after).toMatchObject({ phase: 'funded', state: 'canceled' });
    expect(after.funded_at).not.toBeNull();
  });

  it('an observation dated in the far future counts as undated: it cannot freeze the row, the true later state applies', async () => {
    const funded = await rowIn('funded', 'pending', '2026-01-05T09:00:10.000Z', true);
    const steps = stepsWith({});
    // The row's own transaction, right amounts, a plausible state, but updated_at in 2999.
    expect(await steps.observe(funded, tx('processing', '2999-01-01T00:00:00.000Z'), 'read')).toBe('stale');
    clock.advance(60_000);
    const row = (await store.row(funded.batch_id, 2)) as PipelineRow;
    const label = await steps.observe(row, tx('paid', '2026-01-05T09:01:00.000Z'), 'webhook');
    const after = (await store.row(funded.batch_id, 2)) as PipelineRow;
    expect({ label, phase: after.phase, state: after.state }).toEqual({ label: 'applied', phase: 'final', state: 'paid' });
  });
  it('a cancellation that never reached the service is sent again on a later read: one polling interval apart, three in all, then given up once', async () => {
    // As in a chaos run: paybatch decided to cancel, and the service holds the transaction funded, cancellable (there, in
    // error; here pending, a state that needs no person by itself).
    const funded = await rowIn('funded', 'pending', '2026-01-05T09:00:10.000Z', true);
    const log: string[] = [];
    const calls: string[] = [];
    let reachable = false;
    const steps = new RowSteps({
      store, clock, policy: policyOf(engine), log: (event) => log.push(event), limits: () => ({}), onBalanceExhausted: async () => {}, onUnapprovedRow: async () => {},
      client: {
        async cancelTransaction(id: string) {
          calls.push(`DELETE ${id}`);
          if (!reachable) throw new OutcomeUnknown('connection reset');
          return tx('pending', '2026-01-05T09:00:10.000Z');
        },
      } as unknown as PayoutClient,
    });
    const interval = firstInterval(engine.polling);
    const read = async (state = 'pending', extra: Record<string, unknown> = {}): Promise<PipelineRow> => {
      await steps.observe((await store.row(funded.batch_id, 2)) as PipelineRow, tx(state, '2026-01-05T09:00:10.000Z', extra), 'read');
      return (await store.row(funded.batch_id, 2)) as PipelineRow;
    };
    expect(await steps.end(funded, 'cancelled_on_request', 'asked to', ['funded'])).toBe(true);
    expect(calls).toEqual(['DELETE tr_1']);
    expect(await store.row(funded.batch_id, 2)).toMatchObject({ phase: 'cancelling', cancels_sent: 1, cancel_sent_at: '2026-01-05T09:00:00.000Z' });

    // Read at once, and just before the interval: not sent again yet.
    await read();
    clock.advance(interval - 1);
    await read();
    expect(calls).toHaveLength(1);
    // The service says it may not be cancelled now: nothing is sent.
    clock.advance(1);
    await read('pending', { may_cancel: false });
    expect(calls).toHaveLength(1);
    // Once due, a read that finds it still cancellable sends it again, and again one interval later: three in all.
    expect(await read()).toMatchObject({ phase: 'cancelling', cancels_sent: 2, cancel_sent_at: new Date(clock.now()).toISOString() });
    clock.advance(interval);
    expect((await read()).cancels_sent).toBe(3);
    expect(calls).toEqual(['DELETE tr_1', 'DELETE tr_1', 'DELETE tr_1']);
    // Then given up, said once (log and audit trail), and the row still followed.
    expect((await readStatus(store, clock, funded.batch_id)).batches[0]?.attention).toEqual([]);
    clock.advance(interval);
    const given = await read();
    clock.advance(interval);
    await read();
    expect(calls).toHaveLength(3);
    expect(given).toMatchObject({ phase: 'cancelling', cancels_sent: 4 });
    expect(given.next_read_at).not.toBeNull();
    expect(log.filter((e) => e === 'cancel_sent_again')).toHaveLength(2);
    expect(log.filter((e) => e === 'cancel_given_up')).toHaveLength(1);
    const actions = (await store.auditEntries(0, 1_000)).map((entry) => entry.action);
    expect(actions.filter((a) => a === 'cancel_requested')).toHaveLength(3);
    expect(actions.filter((a) => a === 'cancel_given_up')).toHaveLength(1);
    // Where people look: status lists it among the rows needing a person, with what to do.
    const status = await readStatus(store, clock, funded.batch_id);
    expect(status.batches[0]?.attention.map((a) => [a.line, a.action.slice(0, 40)])).toEqual([[2, 'paybatch sent its cancellation 3 times a']]);
    // The service cancels it and refunds it at last: the row ends.
    reachable = true;
    expect(await read('refunded', { updated_at: '2026-01-05T09:30:00.000Z' })).toMatchObject({ phase: 'final', state: 'refunded' });
  });

  it('a cancellation the service accepted (202) is not sent again while the service carries it out (its give-up: cancel-accepted.test.ts)', async () => {
    const funded = await rowIn('funded', 'pending', '2026-01-05T09:00:10.000Z', true);
    const log: string[] = [];
    const calls: string[] = [];
    const steps = new RowSteps({
      store, clock, policy: policyOf(engine), log: (event) => log.push(event), limits: () => ({}), onBalanceExhausted: async () => {}, onUnapprovedRow: async () => {},
      client: {
        // [D11] 202 with the transaction as it stands: still pending, the cancellation proceeding on its own.
        async cancelTransaction(id: string) { calls.push(`DELETE ${id}`); return tx('pending', '2026-01-05T09:00:10.000Z'); },
      } as unknown as PayoutClient,
    });
    expect(await steps.end(funded, 'cancelled_on_request', 'asked to', ['funded'])).toBe(true);
    const accepted = (await store.row(funded.batch_id, 2)) as PipelineRow;
    expect(accepted).toMatchObject({ phase: 'cancelling', cancels_sent: 1, cancel_accepted_at: '2026-01-05T09:00:00.000Z' });
    // Two intervals of reads that find it still pending (cancellable): nothing sent again, nothing given up, no one told.
    for (let i = 0; i < 2; i++) {
      clock.advance(firstInterval(engine.polling));
      await steps.observe((await store.row(funded.batch_id, 2)) as PipelineRow, tx('pending', '2026-01-05T09:00:10.000Z'), 'read');
    }
    expect(calls).toEqual(['DELETE tr_1']);
    expect(log.filter((e) => e.startsWith('cancel_'))).toEqual([]);
    expect(await store.row(funded.batch_id, 2)).toMatchObject({ phase: 'cancelling', cancels_sent: 1 });
    expect((await readStatus(store, clock, funded.batch_id)).batches[0]?.attention).toEqual([]);
    // A 202 naming another transaction is no acceptance of this one: a row whose answer lies is held, not marked accepted.
    const other = await rowInFresh('funded');
    const lying = new RowSteps({
      store, clock, policy: policyOf(engine), log: (event) => log.push(event), limits: () => ({}), onBalanceExhausted: async () => {}, onUnapprovedRow: async () => {},
      client: { async cancelTransaction() { return tx('pending', '2026-01-05T09:00:10.000Z', { id: 'tr_other' }); } } as unknown as PayoutClient,
    });
    expect(await lying.end(other, 'cancelled_on_request', 'asked to', ['funded'])).toBe(true);
    expect(await store.row(other.batch_id, 2)).toMatchObject({ phase: 'held', cancel_accepted_at: null });
  });

  /** A second batch's row (another external id is not needed: the first batch is settled by then in spirit). */
  async function rowInFresh(phase: Phase): Promise<PipelineRow> {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
    dir = mkdtempSync(join(tmpdir(), 'paybatch-races-'));
    store = SqliteStore.open(join(dir, 'paybatch.db'));
    return rowIn(phase, 'approved', '2026-01-05T09:00:00.000Z');
  }
});
