/**
 * The Metrics against a real SQLite store and a manual clock: the gauges read at
 * a scrape (ages included), the counters fed by the log tap and the call
 * observer, and label values that never carry an id.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PayoutRequest } from '../../src/api/payout-request.js';
import { ManualClock } from '../../src/clock.js';
import { Metrics } from '../../src/console/metrics.js';
import { metricsLog } from '../../src/console/metrics-log.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { RowChanges } from '../../src/store/port.js';
import { Scrape } from '../helpers/prometheus.js';

const RECEIVED = '2026-03-02T09:00:00.000Z';
const request = (id: string): PayoutRequest => ({
  external_id: id, type: 'bank', input_currency_code: 'USD', output_currency_code: 'GBP', output_amount_in_cents: '10000',
  sender: { external_id: `S-${id}` }, recipient: { country_code: 'GBR' },
});

describe('metrics read from the store and counted from events', () => {
  let dir: string;
  let store: SqliteStore;
  let clock: ManualClock;
  let metrics: Metrics;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'paybatch-metrics-'));
    store = SqliteStore.open(join(dir, 'paybatch.db'));
    clock = new ManualClock(RECEIVED);
    metrics = new Metrics({ store, clock });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function batch(ids: string[], sha: string): Promise<string> {
    const id = await store.beginBatch({ file_name: 'f.csv', sha256: sha.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: RECEIVED, file_mtime_ms: 1, send_after: 0 });
    await store.addRows(id, ids.map((external, i) => ({ line: i + 2, external_id: external, request: request(external), errors: [] })));
    await store.acceptBatch(id);
    return id;
  }
  async function set(batchId: string, line: number, changes: RowChanges): Promise<void> {
    const row = await store.row(batchId, line);
    expect(await store.commitRow(batchId, line, row?.revision as number, { changes })).toEqual({ kind: 'applied' });
  }
  const scrape = async (): Promise<Scrape> => new Scrape(await metrics.scrape());

  it('with nothing stored: every phase at zero, nothing awaiting, no attention, ages zero', async () => {
    const s = await scrape();
    expect(s.samples('paybatch_rows').map((m) => m.labels.phase).sort()).toEqual(
      ['cancelling', 'checking', 'created', 'creating', 'duplicate_hold', 'final', 'funded', 'funding', 'held', 'invalid', 'not_sent', 'ready', 'refused']);
    expect(s.total('paybatch_rows')).toBe(0);
    expect(s.samples('paybatch_rows_final').map((m) => m.labels.state).sort()).toEqual(['canceled', 'paid', 'refunded']);
    expect(s.total('paybatch_batches_awaiting_approval')).toBe(0);
    expect(s.total('paybatch_batch_awaiting_approval_oldest_seconds')).toBe(0);
    expect(s.total('paybatch_rows_attention')).toBe(0);
    expect(s.total('paybatch_rows_attention_oldest_seconds')).toBe(0);
    expect(s.family('paybatch_service_call_duration_seconds').type).toBe('HISTOGRAM');
    expect(s.text).not.toMatch(/^process_/m);
  });

  it('the batch awaiting approval and the row needing attention, with their ages on the injected clock', async () => {
    const awaiting = await batch(['A'], 'a');
    await store.requestApproval(awaiting, 'inbox', '2026-03-03T09:00:00.000Z');
    const open = await batch(['B', 'C', 'D', 'E'], 'b');
    await set(open, 2, { phase: 'final', transaction_id: 'tr_b', state: 'paid' });
    await set(open, 3, { phase: 'funded', transaction_id: 'tr_c', state: 'stuck', observed_at: '2026-03-02T09:20:00.000Z' });
    await set(open, 4, { phase: 'held', outcome: 'answer_mismatch', heard_at: '2026-03-02T09:30:00.000Z' });

    clock.advance(3_600_000);
    let s = await scrape();
    expect(s.total('paybatch_rows', { phase: 'ready' })).toBe(2);
    expect(s.total('paybatch_rows', { phase: 'final' })).toBe(1);
    expect(s.total('paybatch_rows')).toBe(5);
    expect(s.total('paybatch_rows_final', { state: 'paid' })).toBe(1);
    expect(s.total('paybatch_batches_awaiting_approval')).toBe(1);
    expect(s.total('paybatch_batch_awaiting_approval_oldest_seconds')).toBe(3600);
    expect(s.total('paybatch_rows_attention')).toBe(2);
    expect(s.total('paybatch_rows_attention_oldest_seconds')).toBe(40 * 60);

    clock.advance(90_000);
    s = await scrape();
    expect(s.total('paybatch_batch_awaiting_approval_oldest_seconds')).toBe(3690);
    expect(s.total('paybatch_rows_attention_oldest_seconds')).toBe(40 * 60 + 90);

    // Approved, and the stuck row paid at last: only the held row is left.
    await store.setApprovalState(awaiting, 'approved', null);
    await set(open, 3, { phase: 'final', state: 'paid', observed_at: '2026-03-02T10:00:00.000Z' });
    s = await scrape();
    expect(s.total('paybatch_batches_awaiting_approval')).toBe(0);
    expect(s.total('paybatch_batch_awaiting_approval_oldest_seconds')).toBe(0);
    expect(s.total('paybatch_rows_attention')).toBe(1);
    expect(s.total('paybatch_rows_attention_oldest_seconds')).toBe(3690 - 30 * 60);
  });

  it('one read of the store per scrape, and a scrape that fails when the store does not answer', async () => {
    let reads = 0;
    const counting = new Metrics({ clock, store: { metricsFigures: (since) => { reads += 1; return store.metricsFigures(since); } } });
    await counting.scrape();
    expect(reads).toBe(1);
    const failing = new Metrics({ clock, store: { metricsFigures: () => Promise.reject(new Error('connection refused')) } });
    await expect(failing.scrape()).rejects.toThrow(/connection refused/);
    // The next scrape reads again: a failure is not kept.
    await counting.scrape();
    expect(reads).toBe(2);
  });

  it('counts what the log says and what the client observes, with label values from fixed lists only', async () => {
    const logged: string[] = [];
    const log = metricsLog((event) => logged.push(event), metrics);
    log('settled', { batch: 'B20260302-aaaaaaaa', line: 2, external_id: 'PAY-0001', transaction: 'tr_1', state: 'paid', source: 'webhook', reads: 0 });
    log('settled', { batch: 'B20260302-aaaaaaaa', line: 3, external_id: 'PAY-0002', transaction: 'tr_2', state: 'paid', source: 'polling', reads: 4 });
    log('settled', { batch: 'B20260302-aaaaaaaa', line: 4, external_id: 'PAY-0003', transaction: 'tr_3', state: 'tr_3 lies', source: 'GB29NWBK60161331926819', reads: 'many' });
    log('balance_exhausted', { currency: 'USD', detail: 'the USD balance ran out (batch B1 line 2)', not_sent: 3 });
    log('balance_exhausted', { currency: 'GB29NWBK60161331926819', detail: 'x', not_sent: 0 });
    log('answer_mismatch', { batch: 'B1', line: 5, external_id: 'PAY-0005', transaction: 'tr_5', asked_in: 'fund', detail: 'amount', fields: [] });
    log('batch_settled', { batch: 'B1' });
    log('funded', { batch: 'B1', line: 2, transaction: 'tr_1', amount: '100', currency: 'USD' });
    expect(logged).toEqual(['settled', 'settled', 'settled', 'balance_exhausted', 'balance_exhausted', 'answer_mismatch', 'batch_settled', 'funded']);
    metrics.call('GET /transactions/:id', 'ok', 0.02);
    metrics.call('GET /transactions/:id', 'ok', 0.3);
    metrics.call('GET /transactions/:id', 'server_error', 1.2);
    metrics.call('POST /transactions', 'no_answer', 30.5);
    metrics.webhookDelivery('accepted', 'stored');
    metrics.webhookDelivery('refused', 'bad_signature');

    const s = await scrape();
    expect(s.total('paybatch_final_states_learned_total', { state: 'paid', source: 'webhook' })).toBe(1);
    expect(s.total('paybatch_final_states_learned_total', { state: 'paid', source: 'polling' })).toBe(1);
    expect(s.total('paybatch_final_states_learned_total', { state: 'other', source: 'other' })).toBe(1);
    expect(s.histograms('paybatch_reads_per_transaction')).toEqual([expect.objectContaining({ count: 2, sum: 4, buckets: expect.objectContaining({ 0: 1, 3: 1, 5: 2, '+Inf': 2 }) })]);
    expect(s.total('paybatch_balance_exhausted_total', { currency: 'USD' })).toBe(1);
    expect(s.total('paybatch_balance_exhausted_total', { currency: 'other' })).toBe(1);
    expect(s.total('paybatch_answer_mismatches_total', { asked_in: 'fund' })).toBe(1);
    expect(s.total('paybatch_batches_settled_total')).toBe(1);
    expect(s.total('paybatch_service_calls_total', { endpoint: 'GET /transactions/:id' })).toBe(3);
    expect(s.total('paybatch_service_calls_total', { endpoint: 'GET /transactions/:id', outcome: 'server_error' })).toBe(1);
    const [reading] = s.histograms('paybatch_service_call_duration_seconds', { endpoint: 'GET /transactions/:id' });
    expect(reading?.count).toBe(3);
    expect(reading?.sum).toBeCloseTo(1.52);
    expect(reading?.buckets).toMatchObject({ '0.025': 1, '0.5': 2, '2.5': 3, '+Inf': 3 });
    expect(s.histograms('paybatch_service_call_duration_seconds', { endpoint: 'POST /transactions' })[0]).toMatchObject({ count: 1, buckets: { 30: 0, '+Inf': 1 } });
    expect(s.histograms('paybatch_service_call_duration_seconds')).toHaveLength(2);
    expect(s.total('paybatch_webhook_deliveries_total', { outcome: 'accepted' })).toBe(1);
    expect(s.total('paybatch_webhook_deliveries_total', { outcome: 'refused', reason: 'bad_signature' })).toBe(1);
    expect(s.text).not.toMatch(/PAY-000|tr_\d|GB29|B2026|B1/);
  });

  it('process metrics when asked for, on its own registry: two instances never share a series', async () => {
    const withProcess = new Metrics({ store, clock, processMetrics: true });
    withProcess.batchSettled();
    const s = new Scrape(await withProcess.scrape());
    // The CPU counters count from the instance's start, so a quick scrape may read 0 (the CI run that
    // failed on it); what the process holds is never 0.
    expect(s.samples('process_cpu_user_seconds_total')).toHaveLength(1);
    expect(s.total('process_resident_memory_bytes')).toBeGreaterThan(1_000_000);
    expect(s.total('paybatch_batches_settled_total')).toBe(1);
    expect((await scrape()).total('paybatch_batches_settled_total')).toBe(0);
  });
});
