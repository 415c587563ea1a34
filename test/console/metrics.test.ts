/**
 * /metrics of a real `paybatch watch` process against the real sandbox over
 * HTTP: scraped while the demo batch is being paid and once it has come to
 * rest, each scrape read by a Prometheus text-format parser.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../chaos/free-port.js';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { BIN } from '../helpers/cli.js';
import { eventually } from '../helpers/daemon.js';
import { FAST_ENGINE, FAST_SANDBOX, template } from '../helpers/engine.js';
import { Scrape } from '../helpers/prometheus.js';

const ENDPOINTS = new Set([
  'GET /corridors/:country', 'POST /transactions', 'GET /transactions', 'GET /transactions/:id', 'POST /transactions/:id/fund',
  'DELETE /transactions/:id', 'POST /webhooks', 'GET /webhooks', 'DELETE /webhooks/:id',
]);
const OUTCOMES = new Set(['ok', 'unreadable', 'rejected', 'auth_refused', 'rate_limited', 'redirect', 'server_error', 'no_answer']);
/** The demo batch: 18 rows, 2 invalid, 12 paid, 4 left in an attention state (error, manual, stuck, exception). */
const DEMO = { rows: 18, invalid: 2, paid: 12, attention: 4 };

describe('/metrics of paybatch watch, as a process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-metrics-'));
  const home = join(dir, 'ws');
  let sandbox: RunningSandbox;
  let watch: ChildProcess;
  let stderr = '';
  let exited: Promise<number | null>;
  let metricsUrl: string;

  beforeAll(async () => {
    // Payouts take a moment, so that a scrape lands while rows are in flight.
    sandbox = await startSandbox({ config: { ...FAST_SANDBOX, payout: { ...FAST_SANDBOX.payout, delay_ms: [400, 1500] } } });
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    openWorkspace(home);
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({
      engine: FAST_ENGINE, batch: { invalid_rows: 'skip_invalid' }, watch: { stable_ms: 100, results_every_ms: 500, listen: { port } },
    }));
    watch = spawn(process.execPath, [BIN, 'watch'], {
      env: { ...process.env, PAYBATCH_HOME: home, PAYBATCH_BASE_URL: sandbox.url, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET: sandbox.apiSecret },
    });
    watch.stdout?.resume();
    watch.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    exited = new Promise((resolve) => watch.on('close', (code) => resolve(code)));
    await eventually(() => /webhooks received at/.test(stderr), 15_000, 'watch started');
  });
  afterAll(async () => {
    if (watch.exitCode === null) watch.kill('SIGKILL');
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function scrape(): Promise<Scrape> {
    const response = await fetch(metricsUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return new Scrape(await response.text());
  }

  /** For every endpoint called: its histogram counts every request its counter counts, outcome by outcome, and its buckets are cumulative. */
  function callsConsistent(s: Scrape): void {
    const called = new Set(s.samples('paybatch_service_calls_total').map((m) => m.labels.endpoint as string));
    expect(called.size).toBeGreaterThan(0);
    for (const endpoint of called) {
      const [histogram] = s.histograms('paybatch_service_call_duration_seconds', { endpoint });
      expect(histogram, endpoint).toBeDefined();
      expect(histogram?.count, endpoint).toBe(s.total('paybatch_service_calls_total', { endpoint }));
      expect(histogram?.buckets['+Inf'], endpoint).toBe(histogram?.count);
      const counts = Object.entries(histogram?.buckets ?? {}).sort(([a], [b]) => Number(a) - Number(b)).map(([, n]) => n);
      expect(counts, endpoint).toEqual([...counts].sort((a, b) => a - b));
      expect(histogram?.sum, endpoint).toBeGreaterThan(0);
    }
    for (const m of s.samples('paybatch_service_calls_total')) {
      expect(ENDPOINTS.has(m.labels.endpoint as string), m.labels.endpoint).toBe(true);
      expect(OUTCOMES.has(m.labels.outcome as string), m.labels.outcome).toBe(true);
    }
  }

  it('counts the demo batch\'s rows, calls, final states and webhooks during the run and once it is at rest; no label names an id or an account', { timeout: 60_000 }, async () => {
    copyFileSync(template('demo-batch.csv'), join(home, 'inbox', 'demo.csv'));

    // During the run: every row of the batch in some phase, some not final yet.
    const during = await eventually(async () => {
      const s = await scrape();
      const inFlight = ['ready', 'creating', 'created', 'funding', 'funded'].reduce((n, phase) => n + s.total('paybatch_rows', { phase }), 0);
      return s.total('paybatch_rows') === DEMO.rows && s.total('paybatch_rows', { phase: 'final' }) < DEMO.paid && inFlight > DEMO.attention ? s : null;
    }, 20_000, 'a scrape with rows in flight');
    expect(during.total('paybatch_rows', { phase: 'invalid' })).toBe(DEMO.invalid);
    callsConsistent(during);

    // A delivery that is not the service's is refused, and counted so.
    const forged = await fetch(metricsUrl.replace('/metrics', '/webhooks'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(forged.status).toBe(401);

    // At rest: the paid rows final, the attention rows followed still.
    const after = await eventually(async () => {
      const s = await scrape();
      return s.total('paybatch_rows', { phase: 'final' }) === DEMO.paid && s.total('paybatch_rows_attention') === DEMO.attention ? s : null;
    }, 30_000, 'the demo batch at rest');
    expect(after.total('paybatch_rows')).toBe(DEMO.rows);
    expect(after.total('paybatch_rows', { phase: 'funded' })).toBe(DEMO.attention);
    expect(after.total('paybatch_rows_final', { state: 'paid' })).toBe(DEMO.paid);
    expect(after.total('paybatch_rows_attention_oldest_seconds')).toBeGreaterThanOrEqual(0);
    expect(after.total('paybatch_batches_awaiting_approval')).toBe(0);
    callsConsistent(after);
    expect(after.total('paybatch_service_calls_total', { endpoint: 'POST /transactions', outcome: 'ok' })).toBe(DEMO.rows - DEMO.invalid);
    expect(after.total('paybatch_service_calls_total', { endpoint: 'POST /transactions/:id/fund', outcome: 'ok' })).toBe(DEMO.rows - DEMO.invalid);
    expect(after.total('paybatch_service_calls_total', { endpoint: 'POST /webhooks' })).toBeGreaterThan(0);

    // Each final state learned once, by webhook or by polling; the reads each took observed with it.
    expect(after.total('paybatch_final_states_learned_total', { state: 'paid' })).toBe(DEMO.paid);
    expect(after.total('paybatch_final_states_learned_total', { source: 'webhook' }) + after.total('paybatch_final_states_learned_total', { source: 'polling' })).toBe(DEMO.paid);
    expect(after.histograms('paybatch_reads_per_transaction')[0]?.count).toBe(DEMO.paid);
    expect(after.total('paybatch_webhook_deliveries_total', { outcome: 'accepted' })).toBeGreaterThan(0);
    expect(after.total('paybatch_webhook_deliveries_total', { outcome: 'refused', reason: 'unsigned' })).toBe(1);
    expect(after.total('paybatch_balance_exhausted_total')).toBe(0);
    expect(after.total('paybatch_answer_mismatches_total')).toBe(0);
    expect(after.total('process_resident_memory_bytes')).toBeGreaterThan(0);

    // No label value names a batch, a row, a transaction, a sender or an account.
    const rows = parse(readFileSync(template('demo-batch.csv')), { columns: true }) as Record<string, string>[];
    const secrets = [
      ...rows.flatMap((r) => [r.external_id, r.sender_external_id, r.recipient_bank_account, r.recipient_iban, r.recipient_phone_number, r.sender_phone_number]),
      ...[...sandbox.store.allTransactions()].map((t) => t.id),
    ].filter((v): v is string => typeof v === 'string' && v.length > 3);
    for (const text of [during.text, after.text]) {
      for (const secret of secrets) expect(text).not.toContain(secret);
      expect(text).not.toMatch(/B\d{8}-[0-9a-f]{8}|tr_[0-9a-f]{8}/);
    }
    for (const value of after.labelValues()) expect(value).not.toMatch(/\d{6,}|DEMO-|SND-/);

    watch.kill('SIGTERM');
    expect(await exited, stderr).toBe(0);
  });
});
