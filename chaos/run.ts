/**
 * `npm run chaos`: paybatch under fire. The sandbox runs with every fault on at
 * once; `paybatch watch` runs as a child process on a large batch (and smaller
 * files dropped meanwhile) and is killed with SIGKILL at random moments, then
 * restarted; the rows that end in `manual` are cancelled; then every invariant
 * is checked and printed as figures. Exits 1 if any fails; the seed replays it.
 *
 * `npm run chaos -- --store postgres --workers 3`: the same on one PostgreSQL
 * database, with three `watch` workers (each in its own workspace, as on three
 * machines); the kills land on random workers, and one more worker is killed
 * and never restarted: the others take its rows, files and calls over.
 *
 *   CHAOS_ROWS (default 2000), CHAOS_KILLS (default 25), CHAOS_SMALL_FILES (default 4), CHAOS_SEED,
 *   CHAOS_PACE (default 1: the sandbox's payouts, paybatch's polling and results and the waits while following
 *   divided by it; not the moments between kills, which land while a process starts and works; `npm test` uses 4),
 *   CHAOS_DATABASE_URL (PostgreSQL to create the run's database on; default PAYBATCH_TEST_DATABASE_URL, else the local server)
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { generateBatch } from '../bench/generate-batch.js';
import { startSandbox } from '../src/sandbox/start.js';
import type { RunningSandbox } from '../src/sandbox/start.js';
import { openWorkspace } from '../src/workspace/workspace.js';
import { freePort } from './free-port.js';
import type { FinalRow } from './invariants.js';
import { checkInvariants, isSettledOrAttention } from './invariants.js';

const BIN = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const ROWS = Number(process.env.CHAOS_ROWS ?? 2000);
const KILLS = Number(process.env.CHAOS_KILLS ?? 25);
const SMALL_FILES = Number(process.env.CHAOS_SMALL_FILES ?? 4);
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
const PACE = Number(process.env.CHAOS_PACE ?? 1);
/** A duration of the run at its pace. */
const paced = (ms: number): number => Math.max(1, Math.round(ms / PACE));
const POLLING = { first_window_ms: paced(60_000), first_window_reads: 12, later_interval_ms: paced(10_000), reads_per_second: 50 };
const { values: ARGS } = parseArgs({ options: { store: { type: 'string', default: 'sqlite' }, workers: { type: 'string', default: '1' } } });
const POSTGRES = ARGS.store === 'postgres';
const WORKERS = Number(ARGS.workers);
if (!['sqlite', 'postgres'].includes(ARGS.store as string) || !Number.isInteger(WORKERS) || WORKERS < 1 || (!POSTGRES && WORKERS > 1) || !(PACE >= 1)) {
  process.stderr.write('usage: chaos [--store sqlite|postgres] [--workers N] (several workers need --store postgres; CHAOS_PACE is 1 or more)\n');
  process.exit(64);
}
const ADMIN_URL = process.env.CHAOS_DATABASE_URL ?? process.env.PAYBATCH_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/**
 * A file a worker was killed claiming (in its processing/, no batch recorded yet) is put back in its inbox after this
 * long, not the default 10 minutes, which this run does not wait: seen when a kill landed between the claim and the
 * record (a moment, longer under load). The shortest store.unrecorded_file_ms.
 */
const UNRECORDED_FILE_MS = 10_000;
/** Workers' leases in the run: short, so that a dead worker's rows are taken over within seconds (at least 3 s, the shortest store.worker_lease_ms). */
const LEASE_MS = Math.max(3_000, paced(5_000));

/** A seeded source of moments, so that a failing run can be replayed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
}
const random = seeded(SEED);
const between = (min: number, max: number): number => min + Math.floor(random() * (max - min));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const say = (line: string): void => void process.stdout.write(`chaos: ${line}\n`);

function paybatch(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

function finished(child: ChildProcess): Promise<{ code: number | null; out: string; err: string }> {
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

/** Account suffixes that make the sandbox end a payout in manual, stuck, error, or error then paid. */
const OUTCOME_SUFFIXES = ['55', '66', '44', '33'];

/**
 * A batch file of `rows` generated rows whose external ids start with `prefix`;
 * some USD accounts are given the suffixes of the sandbox's deterministic
 * outcomes, so that every run has rows in manual, stuck and error.
 */
async function batchFile(path: string, rows: number, prefix: string): Promise<number> {
  // Written beside the inbox, then moved in whole: a worker watching the inbox took a file being written here, and the
  // read below failed (ENOENT) in a fresh clone's run.
  const staging = join(dirname(dirname(path)), `${basename(path)}.staging`);
  await generateBatch(staging, rows);
  let usd = 0;
  const lines = readFileSync(staging, 'utf8').replace(/^BENCH-/gm, `${prefix}-`).split('\n').map((line) => {
    if (!line.includes(',USD,USD,')) return line;
    const suffix = usd % 10 < OUTCOME_SUFFIXES.length * 2 && usd % 2 === 1 ? OUTCOME_SUFFIXES[Math.floor((usd % 10) / 2)] : undefined;
    usd += 1;
    return suffix ? line.replace(/,(1\d{6})\d\d,(savings|current),/, `,$1${suffix},$2,`) : line;
  });
  writeFileSync(staging, lines.join('\n'));
  renameSync(staging, path);
  return rows;
}

const FINAL_ROW_COLUMNS = 'batch_id, line, external_id, transaction_id, phase, state, reads, created_at';

function readSqliteRows(database: string): FinalRow[] {
  // The database appears with the first start that gets that far: on a busy machine every kill may land before.
  if (!existsSync(database)) return [];
  const db = new Database(database, { readonly: true, fileMustExist: true });
  try {
    // The file is made at open, its tables by the first migration to commit: on a busy machine every kill may land
    // between the two, and the last start may still be migrating when it is first read.
    if (db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rows'").get() === undefined) return [];
    return db.prepare(`SELECT ${FINAL_ROW_COLUMNS} FROM rows ORDER BY batch_id, line`).all() as FinalRow[];
  } finally {
    db.close();
  }
}

/** The run's own PostgreSQL database, dropped at the end when every invariant held. */
async function createDatabase(): Promise<{ url: string; rows(): Promise<FinalRow[]>; drop(): Promise<void>; close(): Promise<void> }> {
  const name = `paybatch_chaos_${SEED}_${process.pid}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const reader = new pg.Pool({ connectionString: url.toString(), max: 1 });
  return {
    url: url.toString(),
    rows: async () => {
      // The schema appears with the first worker's start.
      const exists = (await reader.query("SELECT to_regclass('rows') IS NOT NULL AS present")).rows[0] as { present: boolean };
      if (!exists.present) return [];
      return (await reader.query(`SELECT ${FINAL_ROW_COLUMNS}, reads::int AS reads FROM rows ORDER BY batch_id, line`)).rows as FinalRow[];
    },
    close: () => reader.end(),
    async drop() {
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/** The rows in the result files: each batch counted once, from whichever workspace holds its results. */
function rowsInResults(outboxes: string[]): number {
  const perBatch = new Map<string, number>();
  for (const outbox of outboxes) {
    for (const file of readdirSync(outbox).filter((f) => f.endsWith('.results.csv'))) {
      const rows = readFileSync(join(outbox, file), 'utf8').trim().split('\n').length - 1;
      perBatch.set(file, Math.max(perBatch.get(file) ?? 0, rows));
    }
  }
  return [...perBatch.values()].reduce((sum, n) => sum + n, 0);
}

/** One `watch` process, restarted under the same name after each kill; its workspace stands for its machine. */
interface Worker {
  name: string;
  home: string;
  env: NodeJS.ProcessEnv;
  child: ChildProcess | null;
  exit: Promise<{ code: number | null; out: string; err: string }> | null;
  /** Killed for good: never restarted. */
  gone: boolean;
}

function startWorker(worker: Worker): void {
  worker.child = paybatch(['watch'], worker.env);
  worker.exit = finished(worker.child);
}

async function killWorker(worker: Worker): Promise<void> {
  worker.child?.kill('SIGKILL');
  await worker.exit;
  worker.child = null;
}

async function main(): Promise<number> {
  const started = Date.now();
  say(`seed ${SEED} (replay with CHAOS_SEED=${SEED}); ${ROWS} rows, ${KILLS} kills, ${SMALL_FILES} small files; store ${ARGS.store}, ${WORKERS} worker(s)${PACE === 1 ? '' : `; pace ${PACE} (replay with CHAOS_PACE=${PACE})`}`);
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-chaos-'));
  let sandbox: RunningSandbox | null = null;
  const workers: Worker[] = [];
  const database = POSTGRES ? await createDatabase() : null;
  try {
    sandbox = await startSandbox({
      config: {
        port: 0,
        seed: SEED,
        balances: { USD: '100000000000', EUR: '100000000000' },
        kyc: { mode: 'review', verify_after_ms: paced(300), approve_after_ms: paced(1200) },
        payout: {
          clearing_ms: paced(100), quick_ms: paced(100), delay_ms: [paced(200), paced(3000)], slow_delay_ms: [paced(3000), paced(8000)],
          error_retry_ms: paced(3000), cancel_ms: paced(200), refund_ms: paced(500),
        },
        faults: {
          latency: { rate: 0.05, min_ms: 300, max_ms: 2500 },
          http_500_rate: 0.025,
          http_503_rate: 0.025,
          http_429_rate: 0.02,
          retry_after_s: 1,
          reset_after_commit: { create: 0.03, fund: 0.03 },
          late_commit_rate: 0.5,
          webhook_drop_rate: 0.3,
        },
      },
      log: () => {},
    });
    const running = sandbox;
    // The balances, and the ledger entry they stand at: the check counts only what moved after.
    const balancesBefore = running.store.balances();
    const ledgerFrom = running.store.ledger(0, 10_000_000).reduce((last, e) => Math.max(last, e.seq), 0);
    // With one worker, its workspace; with several, one each (three machines), and one more to be killed for good.
    const count = POSTGRES && WORKERS > 1 ? WORKERS + 1 : WORKERS;
    for (let i = 1; i <= count; i++) {
      const home = join(dir, count === 1 ? 'ws' : `worker-${i}`);
      openWorkspace(home);
      const port = await freePort();
      writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({
        batch: { invalid_rows: 'skip_invalid' },
        engine: { concurrency: 8, polling: POLLING },
        watch: { stable_ms: 300, results_every_ms: paced(2000), listen: { port } },
        reports: { service_ledger_url: `${running.operatorUrl}/ledger` },
        ...(POSTGRES ? { store: { worker_lease_ms: LEASE_MS, unrecorded_file_ms: UNRECORDED_FILE_MS } } : {}),
      }));
      const env: NodeJS.ProcessEnv = {
        PAYBATCH_HOME: home, PAYBATCH_BASE_URL: running.url, PAYBATCH_API_KEY: running.apiKey, PAYBATCH_API_SECRET: running.apiSecret,
        ...(database ? { PAYBATCH_DATABASE_URL: database.url, PAYBATCH_WORKER: `w${i}` } : {}),
      };
      workers.push({ name: `w${i}`, home, env, child: null, exit: null, gone: false });
    }
    const first = workers[0] as Worker;
    const inboxOf = (worker: Worker): string => openWorkspace(worker.home).folders.inbox;
    const readRows = async (): Promise<FinalRow[]> => (database ? database.rows() : readSqliteRows(openWorkspace(first.home).database));
    const living = (): Worker[] => workers.filter((w) => !w.gone);
    /** Waits until the worker's log says it accepted the file (its rows are in the database), at most `ms`. */
    const tookIn = async (worker: Worker, file: string, ms: number): Promise<void> => {
      for (const until = Date.now() + ms; Date.now() < until; await sleep(100)) {
        let log = '';
        try {
          log = readFileSync(join(worker.home, 'paybatch.log'), 'utf8');
        } catch {
          // not started yet
        }
        if (log.split('\n').some((line) => line.includes('"intake_accepted"') && line.includes(file))) return;
      }
      say(`${worker.name} had not taken ${file} in after ${ms / 1000} s`);
    };

    // The big file arrives at the worker that will be killed for good (when there is one): the others must carry it.
    const doomed = count > WORKERS ? (workers[count - 1] as Worker) : null;
    let rowsIn = await batchFile(join(inboxOf(doomed ?? first), 'main.csv'), ROWS, 'MAIN');
    let kills = 0;
    let restarts = 0;
    let corridorDisabled = false;
    if (count === 1) {
      // One worker: started, killed after a random moment, started again.
      while (kills < KILLS) {
        startWorker(first);
        restarts += 1;
        await sleep(between(400, 3000));
        await killWorker(first);
        kills += 1;
        ({ rowsIn, corridorDisabled } = await duringKills(kills, rowsIn, corridorDisabled, [first]));
      }
    } else {
      for (const worker of workers) startWorker(worker);
      restarts += workers.length;
      while (kills < KILLS) {
        await sleep(between(400, 3000));
        if (doomed && !doomed.gone && kills === Math.floor(KILLS / 3)) {
          // A machine lost with a file still in its inbox (not taken in) loses that file with it (README): the
          // point here is the others carrying a batch it took, so it goes once its intake of main.csv is in.
          await tookIn(doomed, 'main.csv', 60_000);
          await killWorker(doomed);
          doomed.gone = true;
          say(`${doomed.name} killed for good (its lease expires in ${LEASE_MS / 1000} s; the others take its work over)`);
        }
        const victim = living()[between(0, living().length)] as Worker;
        await killWorker(victim);
        kills += 1;
        await sleep(between(0, 1500));
        startWorker(victim);
        restarts += 1;
        ({ rowsIn, corridorDisabled } = await duringKills(kills, rowsIn, corridorDisabled, living()));
      }
    }

    say('last start: following every row to its end');
    for (const worker of living()) if (!worker.child) startWorker(worker);
    const deadline = Date.now() + Math.max(120_000, ROWS * 60);
    const lastCancel = new Map<string, number>();
    let cancels = 0;
    for (;;) {
      const rows = await readRows();
      // Rows that ended in manual are cancelled (refunded): what an operator does with them.
      for (const batch of new Set(rows.filter((r) => r.state === 'manual' && r.phase === 'funded').map((r) => r.batch_id))) {
        if (Date.now() - (lastCancel.get(batch) ?? 0) < paced(10_000)) continue;
        lastCancel.set(batch, Date.now());
        const result = await finished(paybatch(['cancel', '--batch', batch, '--state', 'manual', '--wait', '20s'], first.env));
        cancels += result.out.split('\n').filter((line) => /\bcancelled$/.test(line)).length;
        if (result.code !== 0) say(`cancel ${batch} exited ${result.code}: ${result.err.trim().split('\n').filter((l) => !l.startsWith('paybatch: using')).slice(0, 4).join(' | ')}`);
      }
      // An attention state the service will still leave by itself (an error it retries) is not an end: wait for it.
      const moving = new Set([...running.store.allTransactions()].filter((t) => t.next_step !== null && t.next_step !== 'expire').map((t) => t.id));
      const done = rows.length > 0 && rows.every(isSettledOrAttention) && rows.every((r) => r.state !== 'manual' || r.phase === 'final')
        && rows.every((r) => r.phase === 'final' || r.transaction_id === null || !moving.has(r.transaction_id));
      const files = workers.flatMap((w) => readdirSync(inboxOf(w)).filter((f) => f.endsWith('.csv')).map((f) => `${w.name}/${f}`));
      if (done && files.length === 0) break;
      if (Date.now() > deadline) {
        say(`gave up waiting: checking what there is${files.length > 0 ? ` (files still in an inbox: ${files.join(', ')})` : ''}`);
        break;
      }
      await sleep(paced(1000));
    }
    await sleep(paced(2500)); // a last round of results
    for (const worker of living()) {
      worker.child?.kill('SIGTERM');
      const last = await worker.exit;
      if (last && last.code !== 0) say(`${worker.name}'s last watch exited ${last.code}: ${last.err.trim().split('\n').slice(-3).join(' | ')}`);
      worker.child = null;
    }

    const today = new Date().toISOString().slice(0, 10);
    const days = [...new Set([new Date(started).toISOString().slice(0, 10), today])];
    let differences = 0;
    let unexplained = 0;
    for (const day of days) {
      const report = await finished(paybatch(['report', '--date', day, '--format', 'json'], first.env));
      // 3: unexplained differences, or a check that could not run; the invariants below say which.
      if (report.code !== 0 && report.code !== 3) throw new Error(`report --date ${day} exited ${report.code}: ${report.err}`);
      const file = join(openWorkspace(first.home).folders.outbox, 'reports', `reconciliation-${day}.json`);
      const { checks, verdict } = JSON.parse(readFileSync(file, 'utf8')) as { checks: { differences: unknown[]; unexplained: number }; verdict: { complete: boolean; result: string } };
      if (!verdict.complete) throw new Error(`report --date ${day} is ${verdict.result}: the chaos run's service offers its ledger, so every check must run`);
      differences += checks.differences.length;
      unexplained += checks.unexplained;
    }

    const failedFiles = workers.flatMap((w) => readdirSync(openWorkspace(w.home).folders.failed).filter((f) => f.endsWith('.csv')));
    const checks = checkInvariants({
      rowsIn,
      rowsInResults: rowsInResults(living().map((w) => openWorkspace(w.home).folders.outbox)),
      serviceExternalIds: [...running.store.allTransactions()].map((t) => t.external_id),
      ledger: running.store.ledger(ledgerFrom, 10_000_000),
      balancesBefore,
      balancesAfter: running.store.balances(),
      rows: await readRows(),
      differences,
      unexplainedDifferences: unexplained,
      seconds: (Date.now() - started) / 1000,
      polling: POLLING,
      endedAt: Date.now(),
    }, restarts);
    if (failedFiles.length > 0) checks.push({ name: 'files refused', figure: failedFiles.join(', '), ok: false });
    say(`${kills} SIGKILLs, ${restarts + 1} starts${doomed ? `, ${doomed.name} killed for good` : ''}, ${cancels} manual rows cancelled`);
    for (const check of checks) say(`${check.ok ? 'ok  ' : 'FAIL'}  ${check.name}: ${check.figure}`);
    const failed = checks.filter((c) => !c.ok);
    say(failed.length === 0 ? `all invariants hold (seed ${SEED})` : `${failed.length} invariant(s) failed (seed ${SEED}); workspace kept at ${dir}${database ? `, database ${database.url}` : ''}`);
    if (failed.length === 0 && !process.env.CHAOS_KEEP) {
      rmSync(dir, { recursive: true, force: true });
      await database?.close();
      await database?.drop();
    } else {
      await database?.close();
    }
    return failed.length === 0 ? 0 : 1;
  } finally {
    for (const worker of workers) worker.child?.kill('SIGKILL');
    await sandbox?.stop();
  }

  /** What happens between kills: small files dropped (at a random living worker), and halfway a corridor turned off. */
  async function duringKills(kills: number, rowsIn: number, corridorDisabled: boolean, at: Worker[]): Promise<{ rowsIn: number; corridorDisabled: boolean }> {
    const dropAt = new Set(Array.from({ length: SMALL_FILES }, (_, i) => Math.floor(((i + 1) * KILLS) / (SMALL_FILES + 1))));
    if (dropAt.has(kills)) {
      const name = `small-${kills}.csv`;
      const worker = at[between(0, at.length)] as Worker;
      rowsIn += await batchFile(join(openWorkspace(worker.home).folders.inbox, name), between(20, 80), `S${kills}`);
      say(`dropped ${name}${at.length > 1 ? ` at ${worker.name}` : ''}`);
    }
    if (!corridorDisabled && kills >= KILLS / 2) {
      // Halfway, a corridor goes inactive: its rows not sent yet are refused, none is lost.
      await fetch(`${(sandbox as RunningSandbox).operatorUrl}/corridors/eur-iban-bank`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ active: false }) });
      corridorDisabled = true;
      say('corridor eur-iban-bank disabled');
    }
    if (kills % 5 === 0) say(`${kills} kills`);
    return { rowsIn, corridorDisabled };
  }
}

process.exitCode = await main().catch((error: unknown) => {
  say(`the run itself failed (seed ${SEED}): ${(error as Error).stack ?? String(error)}`);
  return 2;
});
