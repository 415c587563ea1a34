/**
 * `paybatch run` killed with SIGKILL, then run again, until the batch is paid:
 * no row is created or funded twice at the service, and none is lost.
 *
 * Default depth: one kill at each distinct stage of a payout, landed by event
 * (test/helpers/service-tap.ts, a proxy that names each call): the file claimed
 * but not accepted; the create marker written but the call never reaching the
 * service; a create committed whose answer is lost; a create answered; the
 * lookup of an unknown outcome, answered and lost; the same three for fund; a
 * read of a payout being followed. Each kill lands on the third call of its
 * kind in its run (a lookup: the first), so that other rows are in flight at
 * other stages (four at a time); the sandbox also cuts 10% of creates and
 * funds after committing them. A batch of 120 rows reaches every stage; the
 * rows the sandbox holds for ever (manual, stuck, ...) are left out, so that
 * the last run ends when every row is paid instead of at its --wait.
 * Breaking the lookup before a create again (adopting nothing) fails it.
 *
 * PAYBATCH_DEEP=1 adds the sweep at random moments: 1000 rows, slower payouts,
 * at least 20 SIGKILLs each 150-1050 ms after a start (CRASH_SEED replays it).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import type { SandboxConfigInput } from '../../src/sandbox/config.js';
import { outcomeFor } from '../../src/sandbox/outcomes.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { BIN } from '../helpers/cli.js';
import { DEEP } from '../helpers/depth.js';
import { FAST_ENGINE, FAST_INTAKE, FAST_SANDBOX, debitsPerTransaction } from '../helpers/engine.js';
import type { ServiceCall, ServiceTap } from '../helpers/service-tap.js';
import { serviceTap } from '../helpers/service-tap.js';
import { generateBatch } from '../../bench/generate-batch.js';

/** A seeded source of kill moments, printed so that a failure can be replayed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
}

/** Whether the sandbox keeps this generated row's payout in a state that never ends (docs/sandbox.md, "Deterministic outcomes"). */
function held(header: string, line: string): boolean {
  const [row] = parse(`${header}\n${line}\n`, { columns: true }) as Record<string, string>[];
  const recipient = { phone_number: row?.recipient_phone_number, iban: row?.recipient_iban, bank_account: row?.recipient_bank_account };
  return ['manual', 'stuck', 'exception', 'error_permanent'].includes(outcomeFor(row?.type ?? '', recipient));
}

interface Outcome { code: number | null; signal: string | null; stderr: string }

/** A workspace with one batch of `rows` generated rows (the generator's invalid ones removed), run against `url`. */
class CrashBench {
  dir = '';
  home = '';
  sandbox!: RunningSandbox;
  valid = 0;

  /** keepHeld false: without the rows the sandbox holds for ever (manual, stuck, ...), so that the last run ends when all are paid. */
  async start(rows: number, sandboxConfig: SandboxConfigInput, keepHeld: boolean): Promise<void> {
    this.dir = mkdtempSync(join(tmpdir(), 'paybatch-crash-'));
    this.home = join(this.dir, 'ws');
    this.sandbox = await startSandbox({ config: sandboxConfig });
    const workspace = openWorkspace(this.home);
    writeFileSync(join(this.home, 'paybatch.config.json'), JSON.stringify({ intake: FAST_INTAKE, engine: { ...FAST_ENGINE, concurrency: 4 } }));
    const file = join(this.dir, 'batch.csv');
    await generateBatch(file, rows);
    // The generated batch has a few invalid rows on purpose; here every row should pay.
    const header = readFileSync(file, 'utf8').split('\n', 1)[0] as string;
    const lines = readFileSync(file, 'utf8').split('\n').filter((line, i) => i === 0 || (line !== '' && !/^BENCH-\d*99,/.test(line) && (keepHeld || !held(header, line))));
    this.valid = lines.length - 1;
    writeFileSync(file, `${lines.join('\n')}\n`);
    copyFileSync(file, join(workspace.folders.inbox, 'batch.csv'));
  }

  async stop(): Promise<void> {
    await this.sandbox.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** `paybatch run` against `url`: it ends by itself when every row is final, or at `wait`. */
  spawn(url: string, wait: string): { child: ChildProcess; done: Promise<Outcome> } {
    const env = { ...process.env, PAYBATCH_BASE_URL: url, PAYBATCH_API_KEY: this.sandbox.apiKey, PAYBATCH_API_SECRET: this.sandbox.apiSecret, PAYBATCH_HOME: this.home };
    const child = spawn(process.execPath, [BIN, 'run', '--wait', wait], { env });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const done = new Promise<Outcome>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr })));
    return { child, done };
  }

  /** The batch paid once each: checked on the results file and on the service's own records. */
  async expectPaidOnce(last: Outcome): Promise<void> {
    const { home, sandbox, valid } = this;
    const [resultsFile] = readdirSync(join(home, 'outbox')).filter((f) => f.endsWith('.results.csv'));
    if (!resultsFile) {
      const { default: Database } = await import('better-sqlite3');
      const db = new Database(join(home, 'paybatch.db'), { readonly: true });
      const batches = db.prepare('SELECT id, status, reason, rows_total FROM batches').all();
      db.close();
      const folders = Object.fromEntries(['inbox', 'processing', 'outbox', 'archive', 'failed'].map((f) => [f, readdirSync(join(home, f))]));
      expect.fail(`no result file; batches ${JSON.stringify(batches)}; folders ${JSON.stringify(folders)}; last run: ${last.stderr}`);
    }
    const rows = parse(readFileSync(join(home, 'outbox', resultsFile as string)), { columns: true }) as Record<string, string>[];
    expect(rows).toHaveLength(valid);
    expect(new Set(rows.map((r) => r.external_id)).size).toBe(valid);
    // Every row was sent and is paid, or in the attention state its deterministic outcome gives it.
    const notSettled = rows.filter((r) => !['paid', 'error', 'stuck', 'exception', 'manual', 'refunded'].includes(r.state as string));
    expect(notSettled.map((r) => `${r.line} ${r.state} ${r.error}`)).toEqual([]);
    expect(rows.filter((r) => r.state === 'paid').length).toBeGreaterThan(valid * 0.9);
    for (const row of rows) expect(row.transaction_id).toMatch(/^tr_/);
    // Never funded twice: one debit per transaction at the service.
    const debits = debitsPerTransaction(sandbox);
    expect(debits.size).toBe(valid);
    expect([...debits.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    // Never created twice: one transaction per external id at the service.
    const created = [...sandbox.store.allTransactions()].map((t) => t.external_id);
    expect(created).toHaveLength(valid);
    expect(new Set(created).size).toBe(valid);
  }
}

/**
 * One stage of a payout: the call whose `nth` occurrence in a run is the moment (the third by default, so that other
 * rows are in flight meanwhile; the first lookup, as only the rows the kill before left need one), and where in that
 * call the kill lands.
 */
interface Stage { name: string; call: ServiceCall; at: 'before' | 'lost' | 'after'; nth?: number }

/** In this order, each stage leaves what the next one needs (a lost create answer leaves a lookup to make). */
const STAGES: Stage[] = [
  { name: 'create marker written, the call never reaches the service', call: 'create', at: 'before' },
  { name: 'create committed at the service, its answer lost', call: 'create', at: 'lost' },
  { name: 'lookup of a create of unknown outcome, its answer lost', call: 'lookup', at: 'lost', nth: 1 },
  { name: 'create committed at the service, its answer lost (again)', call: 'create', at: 'lost' },
  { name: 'lookup of a create of unknown outcome, answered', call: 'lookup', at: 'after', nth: 1 },
  { name: 'create answered', call: 'create', at: 'after' },
  { name: 'fund marker written, the call never reaches the service', call: 'fund', at: 'before' },
  { name: 'fund committed at the service, its answer lost', call: 'fund', at: 'lost' },
  { name: 'fund answered', call: 'fund', at: 'after' },
  { name: 'read of a payout being followed, answered', call: 'read', at: 'after' },
];
const NTH = 3;

const kill = async (child: ChildProcess, done: Promise<Outcome>): Promise<void> => {
  child.kill('SIGKILL');
  await done;
};

describe('kill -9 at each stage of a payout, then run again', () => {
  const bench = new CrashBench();
  let tap: ServiceTap;

  beforeAll(async () => {
    await bench.start(120, { ...FAST_SANDBOX, faults: { reset_after_commit: { create: 0.1, fund: 0.1 } } }, false);
    tap = await serviceTap(bench.sandbox.url);
  });
  afterAll(async () => {
    await tap.close();
    await bench.stop();
  });

  /** A run killed the moment the file is claimed (in processing/), before its batch is accepted and sent. */
  async function killAtClaim(): Promise<Outcome> {
    const processing = openWorkspace(bench.home).folders.processing;
    tap.reset();
    const run = bench.spawn(tap.url, '20s');
    const watcher = watch(processing, () => void run.child.kill('SIGKILL'));
    try {
      return await run.done;
    } finally {
      watcher.close();
    }
  }

  /** A run killed at `stage`; a run that ends by itself never reached it (a failure). */
  async function killAt(stage: Stage): Promise<Outcome> {
    tap.reset();
    const run = bench.spawn(tap.url, '20s');
    tap.decide = (call, n) => (call === stage.call && n === (stage.nth ?? NTH) ? { at: stage.at, then: () => kill(run.child, run.done) } : { at: 'pass' });
    try {
      return await run.done;
    } finally {
      tap.decide = () => ({ at: 'pass' });
    }
  }

  it('pays no row twice and loses none, through a SIGKILL at each stage', async () => {
    const claimed = await killAtClaim();
    expect(claimed.signal, `killed when the file was claimed: ${claimed.stderr}`).toBe('SIGKILL');
    expect(tap.counts.create, 'killed before anything was sent').toBe(0);
    const missed: string[] = [];
    for (const stage of STAGES) {
      const outcome = await killAt(stage);
      if (outcome.signal !== 'SIGKILL') missed.push(`${stage.name}: the run ended ${outcome.code} before call ${stage.nth ?? NTH} of ${stage.call}; ${outcome.stderr}`);
    }
    expect(missed).toEqual([]);
    const last = bench.spawn(tap.url, '2m');
    const outcome = await last.done;
    expect(outcome.code, outcome.stderr).toBe(0);
    await bench.expectPaidOnce(outcome);
  }, 120_000);
});

describe.runIf(DEEP)('kill -9 at random calls, then run again (PAYBATCH_DEEP=1)', () => {
  const bench = new CrashBench();
  let tap: ServiceTap;
  const seed = Number(process.env.CRASH_SEED ?? Date.now() % 100_000);

  beforeAll(async () => {
    // Payouts take a while, so that kills land while rows are being created, funded and followed.
    await bench.start(1000, { ...FAST_SANDBOX, payout: { ...FAST_SANDBOX.payout, delay_ms: [100, 1500] }, faults: { reset_after_commit: { create: 0.1, fund: 0.1 } } }, true);
    tap = await serviceTap(bench.sandbox.url);
  });
  afterAll(async () => {
    await tap.close();
    await bench.stop();
  });

  it(`pays no row twice and loses none, through at least 20 SIGKILLs (seed ${seed})`, async () => {
    // Each run is killed at a random call of its own (any kind: create, fund, read, lookup), before it reaches the
    // service, with its answer lost, or after it: a moment chosen by what the run does, not by the clock.
    const random = seeded(seed);
    const moments = ['before', 'lost', 'after'] as const;
    let kills = 0;
    for (let runs = 0; kills < 20 && runs < 80; runs++) {
      tap.reset();
      const run = bench.spawn(tap.url, '20s');
      const nth = 1 + Math.floor(random() * 60);
      const at = moments[Math.floor(random() * moments.length)] as (typeof moments)[number];
      let calls = 0;
      tap.decide = () => (++calls === nth ? { at, then: () => kill(run.child, run.done) } : { at: 'pass' });
      const outcome = await run.done;
      tap.decide = () => ({ at: 'pass' });
      if (outcome.signal === 'SIGKILL') kills += 1;
      else expect(outcome.code, outcome.stderr).toBe(0);
    }
    expect(kills).toBeGreaterThanOrEqual(20);
    // The last run follows what the killed ones left: 20 s was too short for 990 rows on a busy machine.
    const last = await bench.spawn(tap.url, '2m').done;
    expect(last.code, last.stderr).toBe(0);
    await bench.expectPaidOnce(last);
  }, 300_000);
});
