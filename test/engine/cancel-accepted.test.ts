/**
 * [D11] A cancellation the service accepted (202) against answers that lie or come late: an acceptance is recorded
 * only for the row's own transaction at its own amounts; an accepted cancellation is never sent again, and one the
 * service does not carry out is given up for a person; a late acceptance takes a give-up back; a person's cancel
 * refused after the engine's was accepted leaves the row cancelling. Real SQLite, a manual clock, client doubles.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ServiceTransaction } from '../../src/api/answers.js';
import { parseTransaction } from '../../src/api/answers.js';
import type { PayoutClient } from '../../src/api/client.js';
import { OutcomeUnknown, Rejected } from '../../src/api/errors.js';
import type { PayoutRequest } from '../../src/api/payout-request.js';
import { ManualClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import { cancelOnRequest } from '../../src/engine/cancel-on-request.js';
import { policyOf } from '../../src/engine/pipeline.js';
import { firstInterval } from '../../src/engine/read-schedule.js';
import { readStatus } from '../../src/engine/status.js';
import { RowSteps } from '../../src/engine/steps.js';
import type { Phase, TxState } from '../../src/payout-states.js';
import type { PipelineRow } from '../../src/store/port.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';

const REQUEST: PayoutRequest = {
  external_id: 'CA-1', type: 'bank', input_currency_code: 'USD', output_currency_code: 'GBP', output_amount_in_cents: '79120',
  sender: { external_id: 'S-1' }, recipient: { country_code: 'GBR' },
};

function tx(state: string, updatedAt: string, extra: Record<string, unknown> = {}): ServiceTransaction {
  return parseTransaction({
    id: 'tr_1', external_id: 'CA-1', state, may_cancel: true, input_amount_in_cents: '100000', input_currency: 'USD',
    output_amount_in_cents: '79120', output_currency: 'GBP', updated_at: updatedAt, ...extra,
  }) as ServiceTransaction;
}

type Logged = [string, Record<string, unknown>];

describe('a cancellation the service accepted', () => {
  let dir: string;
  let store: SqliteStore;
  let clock: ManualClock;
  const engine = configSchema.parse({ engine: { funding_deadline_ms: 3_600_000 } }).engine;
  const interval = firstInterval(engine.polling);
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'paybatch-cancel-accepted-'));
    store = SqliteStore.open(join(dir, 'paybatch.db'));
    clock = new ManualClock('2026-01-05T09:00:00.000Z');
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const stepsWith = (client: object, log: Logged[] = []): RowSteps => new RowSteps({
    store, client: client as PayoutClient, clock, policy: policyOf(engine), log: (event, fields) => log.push([event, fields]), limits: () => ({}),
    onBalanceExhausted: async () => {}, onUnapprovedRow: async () => {},
  });
  async function rowIn(phase: Phase, state: TxState, funded: boolean, extra: Partial<PipelineRow> = {}): Promise<PipelineRow> {
    const batch = await store.beginBatch({ file_name: 'c.csv', sha256: 'c'.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: '2026-01-05T08:59:00.000Z', file_mtime_ms: null, send_after: 0 });
    await store.addRows(batch, [{ line: 2, external_id: 'CA-1', request: REQUEST, errors: [] }]);
    await store.acceptBatch(batch);
    const ready = (await store.row(batch, 2)) as PipelineRow;
    await store.commitRow(batch, 2, ready.revision, { changes: {
      phase, transaction_id: 'tr_1', state, observed_at: '2026-01-05T09:00:10.000Z', input_amount: '100000', input_currency: 'USD',
      created_at: '2026-01-05T09:00:00.000Z', funded_at: funded ? '2026-01-05T09:00:10.000Z' : null, ...extra,
    } });
    return (await store.row(batch, 2)) as PipelineRow;
  }
  const current = async (row: PipelineRow): Promise<PipelineRow> => (await store.row(row.batch_id, row.line)) as PipelineRow;
  const attention = async (row: PipelineRow): Promise<string[]> => ((await readStatus(store, clock, row.batch_id)).batches[0]?.attention ?? []).map((a) => a.action);

  it('is recorded only for the row\'s own transaction at its own amounts: a 202 with another input amount on a funded row is held, as a read of it would be', async () => {
    const funded = await rowIn('funded', 'pending', true);
    const log: Logged[] = [];
    const steps = stepsWith({ async cancelTransaction() { return tx('pending', '2026-01-05T09:00:10.000Z', { input_amount_in_cents: '999999' }); } }, log);
    expect(await steps.end(funded, 'cancelled_on_request', 'asked to', ['funded'])).toBe(true);
    expect(await current(funded)).toMatchObject({ phase: 'held', outcome: 'answer_mismatch', cancel_accepted_at: null, input_amount: '100000' });
    expect(log.map(([event]) => event)).toContain('answer_mismatch');
  });

  it('is never sent again; still cancellable three intervals after it was accepted, it is given up once, for a person, with words of its own', async () => {
    const funded = await rowIn('funded', 'pending', true);
    const log: Logged[] = [];
    const calls: string[] = [];
    const steps = stepsWith({ async cancelTransaction(id: string) { calls.push(`DELETE ${id}`); return tx('pending', '2026-01-05T09:00:10.000Z'); } }, log);
    expect(await steps.end(funded, 'cancelled_on_request', 'asked to', ['funded'])).toBe(true);
    expect(await current(funded)).toMatchObject({ phase: 'cancelling', cancels_sent: 1, cancel_accepted_at: '2026-01-05T09:00:00.000Z' });
    const read = async (): Promise<PipelineRow> => {
      await steps.observe(await current(funded), tx('pending', '2026-01-05T09:00:10.000Z'), 'read');
      return current(funded);
    };
    clock.advance(3 * interval - 1);
    await read();
    expect(log.filter(([event]) => event.startsWith('cancel_'))).toEqual([]);
    expect(await attention(funded)).toEqual([]);
    clock.advance(1);
    expect(await read()).toMatchObject({ phase: 'cancelling', cancels_sent: 4 });
    for (let i = 0; i < 5; i++) {
      clock.advance(interval);
      await read();
    }
    expect(calls).toEqual(['DELETE tr_1']);
    const givenUp = log.filter(([event]) => event === 'cancel_given_up');
    expect(givenUp).toHaveLength(1);
    expect(givenUp[0]?.[1]).toMatchObject({ sends: 1, accepted_at: '2026-01-05T09:00:00.000Z', reason: expect.stringMatching(/^the service accepted paybatch's cancellation at 2026-01-05T09:00:00.000Z and still holds the transaction as cancellable/) });
    const audits = (await store.auditEntries(0, 1_000)).filter((entry) => entry.action.startsWith('cancel_')).map((entry) => entry.action);
    expect(audits).toEqual(['cancel_requested', 'cancel_accepted', 'cancel_given_up']);
    expect(await attention(funded)).toEqual([expect.stringMatching(/^The service accepted paybatch's cancellation \(2026-01-05T09:00:00.000Z\) but has not carried it out: ask the service/)]);
  });

  it('come after paybatch gave up (a DELETE answered slowly), takes the give-up back', async () => {
    const row = await rowIn('cancelling', 'pending', true, { cancels_sent: 2, cancel_sent_at: '2026-01-05T08:40:00.000Z', outcome: 'cancelled_on_request' });
    const log: Logged[] = [];
    let answer: (tx: ServiceTransaction) => void = () => {};
    let sent: () => void = () => {};
    const deleteSent = new Promise<void>((resolve) => { sent = resolve; });
    const steps = stepsWith({
      async cancelTransaction() {
        sent();
        return new Promise<ServiceTransaction>((resolve) => { answer = resolve; });
      },
    }, log);
    // A read finds it cancellable: the third DELETE goes, its answer slow. One interval later a webhook: given up.
    const third = steps.observe(row, tx('pending', '2026-01-05T09:00:20.000Z'), 'read');
    await deleteSent;
    clock.advance(interval);
    await steps.observe(await current(row), tx('pending', '2026-01-05T09:00:30.000Z'), 'webhook');
    expect(await current(row)).toMatchObject({ cancels_sent: 4 });
    expect(await attention(row)).toHaveLength(1);
    // Then the 202: the service has it after all.
    answer(tx('pending', '2026-01-05T09:00:30.000Z'));
    await third;
    expect(await current(row)).toMatchObject({ phase: 'cancelling', cancels_sent: 3, cancel_accepted_at: '2026-01-05T09:10:00.000Z' });
    expect(await attention(row)).toEqual([]);
  });

  it('a person\'s cancel answered with another transaction: held for a person and said, not reported done', async () => {
    const created = await rowIn('created', 'approved', false);
    const log: Logged[] = [];
    const client = {
      async getTransaction() { return tx('approved', '2026-01-05T09:00:00.000Z'); },
      async cancelTransaction() { return tx('approved', '2026-01-05T09:00:00.000Z', { id: 'tr_other' }); },
    };
    const steps = stepsWith(client, log);
    const answer = await cancelOnRequest(created, 'ada', { client: client as unknown as PayoutClient, clock, engine, log: (event, fields) => log.push([event, fields]), steps, limits: {} });
    expect(answer).toMatchObject({ done: false, reason: expect.stringMatching(/held for a person$/) });
    expect(await current(created)).toMatchObject({ phase: 'held', outcome: 'answer_mismatch', cancel_accepted_at: null });
    expect(log.map(([event]) => event)).toEqual(['answer_mismatch']);
  });

  it('a person\'s cancel refused (422) after the engine\'s own was accepted meanwhile: the row stays cancelling, never funded, and the person is told it is done', async () => {
    const created = await rowIn('created', 'approved', false);
    const log: Logged[] = [];
    const calls: string[] = [];
    const engineSteps = stepsWith({ async cancelTransaction(id: string) { calls.push(`DELETE ${id} (engine)`); return tx('approved', '2026-01-05T09:00:00.000Z'); } }, log);
    let deletes = 0;
    const client = {
      async getTransaction() { return tx('approved', '2026-01-05T09:00:00.000Z'); },
      async fundTransaction(id: string) { calls.push(`FUND ${id}`); return tx('pending', '2026-01-05T09:20:00.000Z'); },
      async cancelTransaction(id: string) {
        calls.push(`DELETE ${id}`);
        if (deletes++ > 0) return tx('approved', '2026-01-05T09:00:00.000Z');
        // While the person's DELETE is slow, the engine reads the row one interval on and sends its own: accepted.
        clock.advance(interval + 1);
        await engineSteps.observe(await current(created), tx('approved', '2026-01-05T09:00:20.000Z'), 'read');
        throw new Rejected(422, [{ field: 'state', message: 'the transaction is being cancelled' }], undefined, 'cancelling tr_1');
      },
    };
    const steps = stepsWith(client, log);
    const answer = await cancelOnRequest(created, 'ada', { client: client as unknown as PayoutClient, clock, engine, log: (event, fields) => log.push([event, fields]), steps, limits: {} });
    expect(answer, JSON.stringify(answer)).toMatchObject({ done: true });
    const after = await current(created);
    expect(after).toMatchObject({ phase: 'cancelling', outcome: 'cancelled_on_request' });
    expect(after.cancel_accepted_at).not.toBeNull();
    await steps.observe(after, tx('approved', '2026-01-05T09:00:30.000Z'), 'read');
    expect(calls).toEqual(['DELETE tr_1', 'DELETE tr_1 (engine)']);
  });

  it('left on a row by an earlier cancellation, does not survive into a new one: its DELETE lost, it is sent again', async () => {
    const funded = await rowIn('funded', 'pending', true, { cancel_accepted_at: '2026-01-05T08:00:00.000Z' });
    const calls: string[] = [];
    const steps = stepsWith({
      async cancelTransaction(id: string) {
        calls.push(`DELETE ${id}`);
        if (calls.length === 1) throw new OutcomeUnknown('connection reset');
        return tx('pending', '2026-01-05T09:00:10.000Z');
      },
    });
    expect(await steps.end(funded, 'over_budget', 'over the budget', ['funded'])).toBe(true);
    expect(await current(funded)).toMatchObject({ phase: 'cancelling', cancels_sent: 1, cancel_accepted_at: null });
    clock.advance(interval);
    await steps.observe(await current(funded), tx('pending', '2026-01-05T09:00:20.000Z'), 'read');
    expect(calls).toEqual(['DELETE tr_1', 'DELETE tr_1']);
    expect(await current(funded)).toMatchObject({ cancels_sent: 2, cancel_accepted_at: new Date(clock.now()).toISOString() });
  });
});
