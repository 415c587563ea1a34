/**
 * Several `paybatch watch` workers, as real child processes, on one PostgreSQL
 * database and the sandbox over HTTP: two watching one inbox never take a file
 * twice; a worker killed (SIGKILL) and never restarted loses nothing, its rows
 * taken over by the others once its lease expires, no payout created or funded
 * twice; and calls to the service never exceed the budget shared by all.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { BIN, runCli } from '../helpers/cli.js';
import { FAST_ENGINE, FAST_SANDBOX, debitsPerTransaction } from '../helpers/engine.js';
import { validBatchLines } from '../helpers/batch-lines.js';
import { eventually } from '../helpers/daemon.js';
import { freshDatabase, postgresAvailable } from '../helpers/postgres.js';
import type { FreshDatabase } from '../helpers/postgres.js';
import { delay, lyingService } from '../helpers/lying-service.js';
import type { LyingService } from '../helpers/lying-service.js';

const available = await postgresAvailable('the tests of several workers on PostgreSQL');
const LEASE_MS = 3_000;
/**
 * Rows per file of the shared inbox and per file of the budget test (what they prove is that no file is taken twice
 * and that the budget holds: a few rows each keep both workers busy), and rows of the batch whose worker is killed
 * (enough that it dies mid-batch: it is killed once 30 of them are created).
 */
const SMALL_FILE_ROWS = 15;
const BIG_ROWS = 150;

interface Worker {
  name: string;
  home: string;
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

describe.skipIf(!available)('several workers on one PostgreSQL', () => {
  let dir: string;
  let database: FreshDatabase;
  let sandbox: RunningSandbox;
  let db: pg.Client;
  const workers: Worker[] = [];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'paybatch-workers-'));
    database = await freshDatabase();
    sandbox = await startSandbox({ config: { ...FAST_SANDBOX, payout: { ...FAST_SANDBOX.payout, delay_ms: [200, 1200] } } });
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) w.child.kill('SIGKILL');
    await db.end();
    await sandbox.stop();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  function configure(home: string, extra: Record<string, unknown> = {}): void {
    openWorkspace(home);
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({
      intake: { stable_ms: 100 },
      // Its files are the same rows under other prefixes on purpose: not held as possible duplicates.
      batch: { invalid_rows: 'skip_invalid', duplicate_window: 'off' },
      engine: { ...FAST_ENGINE, concurrency: 4, ...(extra.engine as object) },
      watch: { results_every_ms: 500, listen: { port: 0 } },
      store: { worker_lease_ms: LEASE_MS },
    }));
  }

  function startWorker(name: string, home: string, baseUrl = sandbox.url): Worker {
    const child = spawn(process.execPath, [BIN, 'watch'], {
      env: { ...process.env, PAYBATCH_HOME: home, PAYBATCH_BASE_URL: baseUrl, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET: sandbox.apiSecret, PAYBATCH_DATABASE_URL: database.url, PAYBATCH_WORKER: name },
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const worker = { name, home, child, stderr: () => stderr, exited: new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code))) };
    workers.push(worker);
    return worker;
  }

  /**
   * Every worker started and watching. A bound for a loaded machine: under two busy loops, with three other test files
   * beside this one, three workers took more than 15 s to migrate their database and start. A worker that died says why.
   */
  async function allWatching(started: Worker[]): Promise<void> {
    try {
      await eventually(() => started.every((w) => w.stderr().includes('watching')), 45_000, `${started.length} workers watching`);
    } catch (error) {
      throw new Error(`${(error as Error).message}; ${started.map((w) => `${w.name} (exit ${String(w.child.exitCode)}): ${w.stderr().slice(-400)}`).join(' | ')}`);
    }
  }

  const rows = async (): Promise<{ batch_id: string; line: number; external_id: string; phase: string; state: string | null; transaction_id: string | null }[]> =>
    (await db.query('SELECT batch_id, line, external_id, phase, state, transaction_id FROM rows ORDER BY batch_id, line')).rows;

  async function writeBatch(path: string, count: number, prefix: string): Promise<string[]> {
    const { header, rows: lines } = await validBatchLines(dir, count);
    const renamed = lines.map((line) => line.replace(/^BENCH-/, `${prefix}-`));
    writeFileSync(path, `${header}\n${renamed.join('\n')}\n`);
    return renamed.map((line) => line.split(',')[0] as string);
  }

  function expectPaidOnce(ids: string[]): void {
    const perId = new Map<string, number>();
    for (const t of sandbox.store.allTransactions()) perId.set(t.external_id, (perId.get(t.external_id) ?? 0) + 1);
    for (const id of ids) expect(perId.get(id), id).toBe(1);
    expect(Math.max(...debitsPerTransaction(sandbox).values())).toBe(1);
  }

  it('two workers watching one inbox take each file once, and share its rows', async () => {
    const home = join(dir, 'shared-ws');
    configure(home);
    const a = startWorker('a', home);
    const b = startWorker('b', home);
    await allWatching([a, b]);
    const inbox = openWorkspace(home).folders.inbox;
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(...(await writeBatch(join(inbox, `file-${i}.csv`), SMALL_FILE_ROWS, `F${i}`)));
    await eventually(async () => (await db.query("SELECT COUNT(*)::int AS n FROM batches WHERE status = 'settled'")).rows[0].n === 6, 60_000, 'six batches settled');
    const batches = (await db.query("SELECT file_name, status, taken_by FROM batches")).rows as { file_name: string; status: string; taken_by: string }[];
    expect(batches.map((b) => b.file_name).sort()).toEqual(['file-0.csv', 'file-1.csv', 'file-2.csv', 'file-3.csv', 'file-4.csv', 'file-5.csv']);
    expect((await rows()).every((r) => r.phase === 'final' && r.state === 'paid')).toBe(true);
    expectPaidOnce(ids);
    expect(readdirSync(openWorkspace(home).folders.failed)).toEqual([]);
    await eventually(() => readdirSync(openWorkspace(home).folders.processing).length === 0, 15_000, 'every file archived');
    // /healthz answers for the database and says what the worker holds.
    const health = /health: (\S+)\)/.exec(a.stderr())?.[1] as string;
    const answer = (await (await fetch(health)).json()) as { status: string; worker: { worker: string; live_workers: number } };
    expect(answer).toMatchObject({ status: 'ok', worker: { worker: 'a', live_workers: 2 } });
  }, 150_000);

  it('a worker killed and never restarted: the others carry its batch on, nothing created or funded twice', async () => {
    const homes = ['one', 'two', 'three'].map((n) => join(dir, n));
    for (const home of homes) configure(home);
    const [first, second, third] = homes.map((home, i) => startWorker(`w${i + 1}`, home)) as [Worker, Worker, Worker];
    await allWatching([first, second, third]);
    const ids = await writeBatch(join(openWorkspace(homes[0] as string).folders.inbox, 'big.csv'), BIG_ROWS, 'BIG');
    // Killed once its rows are being sent: some created, not all.
    await eventually(async () => (await rows()).filter((r) => r.transaction_id !== null).length >= 30, 30_000, 'rows being created');
    first.child.kill('SIGKILL');
    const killedAt = Date.now();
    await first.exited;
    await eventually(async () => {
      const now = await rows();
      return now.length === BIG_ROWS && now.every((r) => r.phase === 'final');
    }, 90_000, 'every row final after the kill');
    const tookMs = Date.now() - killedAt;
    expect((await rows()).every((r) => r.state === 'paid')).toBe(true);
    expectPaidOnce(ids);
    await eventually(async () => (await db.query("SELECT status FROM batches WHERE status = 'settled'")).rows.length === 1, 15_000, 'the batch settled');
    // Its results were written by the surviving workers (each writes the open batches' results to its own outbox), from
    // the database; the file archived from the bytes kept there.
    const results = homes.slice(1).flatMap((home) => readdirSync(openWorkspace(home).folders.outbox).filter((f) => f.endsWith('.results.csv')).map((f) => join(openWorkspace(home).folders.outbox, f)));
    expect(results.length).toBeGreaterThanOrEqual(1);
    await eventually(() => results.every((file) => {
      const lines = readFileSync(file, 'utf8').trim().split('\n').slice(1);
      return lines.length === BIG_ROWS && lines.every((line) => line.includes(',paid,'));
    }), 10_000, 'every result file final');
    const archived = homes.slice(1).flatMap((home) => readdirSync(openWorkspace(home).folders.archive));
    expect(archived.some((name) => name.endsWith('--big.csv'))).toBe(true);
    // Any worker's machine shows the whole picture: the batch, and which worker is gone.
    const status = await runCli(['status'], { env: { PAYBATCH_HOME: homes[2] as string, PAYBATCH_DATABASE_URL: database.url } });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/settled/);
    expect(status.stdout).toMatch(/worker w1 {2}gone/);
    expect(status.stdout).toMatch(/worker w2 {2}alive .* holds \d+ rows, \d+ call slots/);
    process.stdout.write(`several workers: the killed worker's rows were all final ${(tookMs / 1000).toFixed(1)} s after the kill (lease ${LEASE_MS / 1000} s)\n`);
  }, 150_000);

  it('calls in flight never exceed engine.service_concurrency across workers', async () => {
    // A double in front of the sandbox counts the calls in flight at once (it lies about nothing here).
    const counter: LyingService = await lyingService(sandbox);
    counter.lie({ match: { path: /^\/transactions/ }, act: delay(40) });
    const homes = ['x', 'y', 'z'].map((n) => join(dir, n));
    for (const home of homes) configure(home, { engine: { concurrency: 4, service_concurrency: 3 } });
    const started = homes.map((home, i) => startWorker(`c${i + 1}`, home, counter.url));
    await allWatching(started);
    const ids: string[] = [];
    for (const [i, home] of homes.entries()) ids.push(...(await writeBatch(join(openWorkspace(home).folders.inbox, `c-${i}.csv`), SMALL_FILE_ROWS, `C${i}`)));
    await eventually(async () => (await db.query("SELECT COUNT(*)::int AS n FROM batches WHERE status = 'settled'")).rows[0].n === 3, 90_000, 'three batches settled');
    expectPaidOnce(ids);
    expect(counter.maxInFlight).toBeGreaterThanOrEqual(2);
    expect(counter.maxInFlight).toBeLessThanOrEqual(3);
    await counter.close();
  }, 150_000);
});
