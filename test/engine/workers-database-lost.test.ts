/**
 * PostgreSQL going away under three `paybatch watch` workers (real child
 * processes of the built binary), mid-batch: the database is reached through a
 * TCP proxy the test cuts and restores, the server itself never restarted.
 * No worker dies of an unhandled error: each stops once it cannot renew its
 * lease, with exit 75 and one line; one started while the database is away
 * says so the same way. Restarted once it is back, the workers finish the
 * batch: every row final, each payout created and funded exactly once. Cut
 * for a moment only, within the lease, the same workers carry on by themselves.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { BIN } from '../helpers/cli.js';
import { FAST_ENGINE, FAST_SANDBOX, debitsPerTransaction } from '../helpers/engine.js';
import { validBatchLines } from '../helpers/batch-lines.js';
import { eventually } from '../helpers/daemon.js';
import { freshDatabase, postgresAvailable } from '../helpers/postgres.js';
import type { FreshDatabase } from '../helpers/postgres.js';
import type { TcpProxy } from '../helpers/tcp-proxy.js';
import { addressOf, proxiedUrl, tcpProxy } from '../helpers/tcp-proxy.js';

const available = await postgresAvailable('the tests of workers losing PostgreSQL');
/**
 * A worker stops once its lease has gone unrenewed for two thirds of it. At 3 s (2 s unrenewed) a worker on a loaded
 * machine could stop before the cut, its one line printed before the test marked where to read from.
 */
const LEASE_MS = 6_000;
/** Enough that a cut once 20 rows are created lands mid-batch: a worker cannot make a row final without the database. */
const ROWS = 100;

interface Worker {
  name: string;
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** What a worker must never print: a stack trace (an unhandled error), or the top-level handler's word for a bug. */
const CRASH = /^\s+at |unexpected error|Unhandled|Connection terminated unexpectedly\n/m;

describe.skipIf(!available)('workers when PostgreSQL goes away', () => {
  let dir: string;
  let database: FreshDatabase;
  let proxy: TcpProxy;
  let sandbox: RunningSandbox;
  let db: pg.Client;
  const workers: Worker[] = [];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'paybatch-db-lost-'));
    database = await freshDatabase();
    proxy = await tcpProxy(addressOf(database.url));
    sandbox = await startSandbox({ config: { ...FAST_SANDBOX, payout: { ...FAST_SANDBOX.payout, delay_ms: [200, 1200] } } });
    // The test's own connection goes around the proxy: it sees the rows while the workers cannot.
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) w.child.kill('SIGKILL');
    await db.end();
    await proxy.close();
    await sandbox.stop();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  function configure(home: string, leaseMs = LEASE_MS, idleClaimMs?: number): void {
    openWorkspace(home);
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({
      intake: { stable_ms: 100 },
      batch: { invalid_rows: 'skip_invalid' },
      engine: { ...FAST_ENGINE, concurrency: 4 },
      watch: { results_every_ms: 500, listen: { port: 0 } },
      store: { worker_lease_ms: leaseMs, ...(idleClaimMs === undefined ? {} : { idle_claim_ms: idleClaimMs }) },
    }));
  }

  function startWorker(name: string, home: string, command: readonly string[] = ['watch']): Worker {
    const child = spawn(process.execPath, [BIN, ...command], {
      env: {
        ...process.env, PAYBATCH_HOME: home, PAYBATCH_BASE_URL: sandbox.url, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET: sandbox.apiSecret,
        PAYBATCH_DATABASE_URL: proxiedUrl(database.url, proxy), PAYBATCH_WORKER: name,
      },
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const worker = { name, child, stderr: () => stderr, exited: new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code))) };
    workers.push(worker);
    return worker;
  }

  const rows = async (): Promise<{ phase: string; state: string | null; transaction_id: string | null }[]> =>
    (await db.query('SELECT phase, state, transaction_id FROM rows ORDER BY batch_id, line')).rows;

  /** Every row final and paid; at the service, one payout created per row and funded once. */
  async function expectEachPaidOnce(ids: readonly string[]): Promise<void> {
    expect((await rows()).every((r) => r.state === 'paid')).toBe(true);
    const created = new Map<string, number>();
    for (const t of sandbox.store.allTransactions()) created.set(t.external_id, (created.get(t.external_id) ?? 0) + 1);
    for (const id of ids) expect(created.get(id), id).toBe(1);
    const debits = debitsPerTransaction(sandbox);
    expect(debits.size).toBe(ids.length);
    expect(Math.max(...debits.values())).toBe(1);
  }

  async function dropBatch(home: string): Promise<string[]> {
    const { header, rows: lines } = await validBatchLines(dir, ROWS);
    writeFileSync(join(openWorkspace(home).folders.inbox, 'big.csv'), `${header}\n${lines.join('\n')}\n`);
    return lines.map((line) => line.split(',')[0] as string);
  }

  /** The worker's last line, and that it is the only one since `from` (its stderr's length then). */
  const linesSince = (worker: Worker, from: number): string[] => worker.stderr().slice(from).split('\n').filter((line) => line.length > 0);

  it('cut mid-batch: each worker stops with exit 75 and one line; restarted once the database is back, nothing is lost or paid twice', async () => {
    const homes = ['one', 'two', 'three'].map((n) => join(dir, n));
    for (const home of homes) configure(home);
    const started = homes.map((home, i) => startWorker(`w${i + 1}`, home));
    await eventually(() => started.every((w) => w.stderr().includes('watching')), 45_000, 'three workers watching');
    const ids = await dropBatch(homes[0] as string);
    // Cut while rows are being sent: some created, not all final.
    await eventually(async () => (await rows()).filter((r) => r.transaction_id !== null).length >= 20, 30_000, 'rows being created');
    for (const worker of started) expect(worker.child.exitCode, `${worker.name} stopped before the cut: ${worker.stderr()}`).toBeNull();
    const before = started.map((w) => w.stderr().length);
    proxy.cut();

    // Each stops once its lease has gone unrenewed for two thirds of it (4 s here), by itself.
    const codes = await eventually(async () => {
      const done = await Promise.all(started.map((w) => Promise.race([w.exited, Promise.resolve('running' as const)])));
      return done.every((code) => code !== 'running') ? done : null;
    }, 30_000, 'every worker stopped after the cut');
    for (const [i, worker] of started.entries()) {
      expect(worker.stderr(), worker.name).not.toMatch(CRASH);
      expect(codes[i], `${worker.name}: ${worker.stderr()}`).toBe(75);
      const last = linesSince(worker, before[i] as number).at(-1);
      expect(last, worker.name).toMatch(/^paybatch: (the worker lease was not renewed for \d+ s .*; stopping|the database cannot be reached .*)$/);
    }
    const finalBeforeRestore = (await rows()).filter((r) => r.phase === 'final').length;
    expect(finalBeforeRestore).toBeLessThan(ROWS);

    // One started while the database is still away: one line, exit 75 (try again later), not 65 (a database it cannot use).
    const early = startWorker('w1', homes[0] as string);
    expect(await early.exited).toBe(75);
    expect(linesSince(early, 0)).toEqual([expect.stringMatching(/^paybatch: PostgreSQL at postgres:\/\/.+ cannot be reached \(.+\): nothing was changed; run again once it answers$/)]);

    proxy.restore();
    const restarted = homes.map((home, i) => startWorker(`w${i + 1}`, home));
    await eventually(async () => {
      const now = await rows();
      return now.length === ROWS && now.every((r) => r.phase === 'final');
    }, 90_000, 'every row final after the restart');
    await expectEachPaidOnce(ids);
    for (const worker of restarted) expect(worker.stderr(), worker.name).not.toMatch(CRASH);
  }, 180_000);

  it('cut for a moment, well within the lease: the workers carry on by themselves, the failed steps taken up again from what is stored', async () => {
    const homes = ['one', 'two', 'three'].map((n) => join(dir, n));
    // A long lease: the cut ends long before any worker must stop. Claims left unused by the cut are freed after
    // 2 s (store.idle_claim_ms) instead of the default minute, which this test would otherwise wait for; a claim in
    // use is never freed (the sweep leaves the rows a worker is working on), so the short time weakens nothing.
    for (const home of homes) configure(home, 60_000, 2_000);
    const started = homes.map((home, i) => startWorker(`w${i + 1}`, home));
    await eventually(() => started.every((w) => w.stderr().includes('watching')), 45_000, 'three workers watching');
    const ids = await dropBatch(homes[0] as string);
    await eventually(async () => (await rows()).filter((r) => r.transaction_id !== null).length >= 20, 30_000, 'rows being created');
    const before = started.map((w) => w.stderr().length);
    proxy.cut();
    // Restored once every worker has seen the database fail (its loop says so each round).
    await eventually(() => started.every((w, i) => w.stderr().slice(before[i]).includes('the database cannot be reached')), 30_000, 'every worker meeting the cut');
    proxy.restore();
    // Rows this worker had claimed for a pass that the cut ended wait for its sweep of unused claims (2 s here).
    await eventually(async () => {
      const now = await rows();
      return now.length === ROWS && now.every((r) => r.phase === 'final');
    }, 150_000, 'every row final after the cut');
    await expectEachPaidOnce(ids);
    for (const worker of started) {
      expect(worker.child.exitCode, worker.name).toBeNull();
      expect(worker.stderr(), worker.name).not.toMatch(CRASH);
    }
  }, 240_000);

  it('a `run` cut mid-batch exits 75 with one line; run again once the database is back, it finishes the batch', async () => {
    const home = join(dir, 'run');
    configure(home);
    const ids = await dropBatch(home);
    const first = startWorker('r1', home, ['run', '--wait', '2m']);
    // Its tables exist once it has joined the workers.
    await eventually(() => first.stderr().includes('paybatch: worker r1 on'), 20_000, 'the run joined');
    await eventually(async () => (await rows()).filter((r) => r.transaction_id !== null).length >= 20, 30_000, 'rows being created');
    const before = first.stderr().length;
    proxy.cut();
    const code = await first.exited;
    expect(first.stderr()).not.toMatch(CRASH);
    expect(code, first.stderr()).toBe(75);
    expect(linesSince(first, before).at(-1)).toMatch(/^paybatch: (the worker lease was not renewed for \d+ s .*; stopping|the database cannot be reached \(.+\): nothing is lost.*)$/);
    proxy.restore();
    const again = startWorker('r1', home, ['run', '--wait', '90s']);
    expect(await again.exited, again.stderr()).toBe(0);
    expect((await rows()).every((r) => r.phase === 'final')).toBe(true);
    await expectEachPaidOnce(ids);
  }, 180_000);
});
