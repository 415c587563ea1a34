/**
 * `npm run bench:submit`: submits a batch of BENCH_ROWS rows (default 10,000)
 * through the payout engine (intent, create, quote check, reserve, fund, each
 * step in SQLite) against the sandbox in its own process, with a fixed latency L
 * on every call and concurrency C. Each row takes two calls, so C/(2·L) rows/s
 * is the bound; prints rows/s, the bound, their ratio (goal: at least 0.9), and
 * peak RSS; then the same with no added latency (goal: at least 1,000 rows/s).
 *
 *   BENCH_ROWS, BENCH_LATENCY_MS (default 100, a realistic payout API), BENCH_CONCURRENCY (default 32)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PayoutClient } from '../src/api/client.js';
import { systemClock } from '../src/clock.js';
import { configSchema } from '../src/config/config.js';
import { takeFile } from '../src/engine/intake.js';
import { Pipeline } from '../src/engine/pipeline.js';
import { releaseBatch } from '../src/engine/release.js';
import type { BatchRecord } from '../src/store/store.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { openWorkspace } from '../src/workspace/workspace.js';
import { generateBatch } from './generate-batch.js';
import { peakRssMb, startSandboxProcess } from './sandbox-process.js';

const rows = Number(process.env.BENCH_ROWS ?? 10_000);
const latencyMs = Number(process.env.BENCH_LATENCY_MS ?? 100);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);

async function submitOnce(dir: string, label: string, latency: number): Promise<{ rate: number; seconds: number }> {
  const sandboxConfig = join(dir, `${label}.sandbox.json`);
  writeFileSync(sandboxConfig, JSON.stringify({
    balances: { USD: '900000000000000000', EUR: '900000000000000000' },
    // Payouts far in the future: this measures submission, not following.
    payout: { clearing_ms: 3_600_000, delay_ms: [3_600_000, 3_600_000] },
    faults: { latency: { rate: latency > 0 ? 1 : 0, min_ms: latency, max_ms: latency } },
  }));
  const sandbox = await startSandboxProcess(sandboxConfig);
  const workspace = openWorkspace(join(dir, label));
  const store = SqliteStore.open(workspace.database);
  const config = configSchema.parse({ engine: { concurrency } });
  const client = new PayoutClient({
    baseUrl: sandbox.url, credentials: { apiKey: sandbox.key, apiSecret: sandbox.secret },
    timeoutMs: 10_000, retry: { baseMs: 50, capMs: 1000, attempts: 5 }, maxAnswerBytes: 1024 * 1024, connections: concurrency,
  });
  try {
    const source = join(dir, 'batch.csv');
    const inbox = join(workspace.folders.inbox, 'batch.csv');
    writeFileSync(inbox, readFileSync(source));
    // Complete (its marker says so): taken in and sent at once.
    writeFileSync(`${inbox}.done`, '');
    const intake = await takeFile(inbox, { workspace, store, batch: config.batch, intake: config.intake, policy: 'skip_invalid', clock: systemClock });
    if (intake.kind !== 'accepted') throw new Error(`the generated batch was not accepted: ${intake.kind}`);
    await releaseBatch((await store.batch(intake.batch)) as BatchRecord, { workspace, store, clock: systemClock });
    const pipeline = new Pipeline({ store, client, clock: systemClock, engine: config.engine, log: () => {} });
    const started = performance.now();
    await pipeline.submit(intake.batch);
    const seconds = (performance.now() - started) / 1000;
    const funded = (await store.rowsInPhases(intake.batch, ['funded'], 0, 1_000_000)).length;
    if (funded !== intake.ready) throw new Error(`${funded} of ${intake.ready} rows funded`);
    return { rate: intake.ready / seconds, seconds };
  } finally {
    await client.close();
    await store.close();
    sandbox.stop();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'paybatch-bench-submit-'));
try {
  await generateBatch(join(dir, 'batch.csv'), rows);
  const bound = concurrency / (2 * (latencyMs / 1000));
  const slow = await submitOnce(dir, 'latency', latencyMs);
  const fast = await submitOnce(dir, 'no-latency', 0);
  const rss = peakRssMb(process.pid);
  console.log(`bench:submit  ${rows} generated rows (every hundredth invalid, skipped), concurrency ${concurrency}`);
  console.log(`  with ${latencyMs} ms latency per call  ${slow.rate.toFixed(0).padStart(6)} rows/s  (${slow.seconds.toFixed(1)} s)`);
  console.log(`  bound C/(2L)                   ${bound.toFixed(0).padStart(6)} rows/s`);
  console.log(`  ratio to the bound             ${(slow.rate / bound).toFixed(2)}   (goal: at least 0.90)`);
  console.log(`  with no added latency          ${fast.rate.toFixed(0).padStart(6)} rows/s  (${fast.seconds.toFixed(1)} s; goal: at least 1000)`);
  console.log(`  peak RSS of paybatch           ${rss} MB`);
  if (slow.rate / bound < 0.9 || fast.rate < 1000) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
