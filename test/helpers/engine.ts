/** Runs the engine in-process against a fast sandbox, in a fresh workspace. */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { afterAll, beforeAll } from 'vitest';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PayoutClient } from '../../src/api/client.js';
import type { ClientOptions } from '../../src/api/client.js';
import type { Clock } from '../../src/clock.js';
import { ATTENTION_STATES, DUPLICATE_HOLD, FINAL_STATES, NEVER_SENT_PHASES, SETTLED_PHASES } from '../../src/payout-states.js';
import { phaseList } from '../../src/store/sql-lists.js';
import { configSchema } from '../../src/config/config.js';
import type { Config } from '../../src/config/config.js';
import { approvalPolicy } from '../../src/approvals/policy.js';
import type { RunDeps, RunReport } from '../../src/engine/run.js';
import { runOnce } from '../../src/engine/run.js';
import type { SandboxConfigInput } from '../../src/sandbox/config.js';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { ukModulusValid } from '../../src/validate/bank-accounts.js';
import type { Workspace } from '../../src/workspace/workspace.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { ManualClock } from '../../src/clock.js';

/** Payouts in milliseconds, so that tests wait for events, not for time. */
export const FAST_SANDBOX: SandboxConfigInput = {
  port: 0,
  tick_ms: 5,
  payout: { clearing_ms: 5, quick_ms: 5, delay_ms: [10, 40], slow_delay_ms: [50, 100], error_retry_ms: 50, cancel_ms: 5, refund_ms: 5 },
};

/** FAST_SANDBOX, but a payout funded stays in flight for ten minutes: none is final while a test looks, and it is read on. */
export const IN_FLIGHT_SANDBOX: SandboxConfigInput = {
  ...FAST_SANDBOX,
  payout: { ...FAST_SANDBOX.payout, delay_ms: [600_000, 600_000], slow_delay_ms: [600_000, 600_000] },
};

/**
 * For a whole suite (call it inside its describe): a temporary folder, and a
 * FAST_SANDBOX started before the suite's tests, stopped and the folder removed
 * after them.
 */
export function fastSandboxForSuite(prefix: string): { dir: string; readonly sandbox: RunningSandbox } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let sandbox: RunningSandbox | undefined;
  beforeAll(async () => {
    sandbox = await startSandbox({ config: FAST_SANDBOX });
  });
  afterAll(async () => {
    await sandbox?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir,
    get sandbox(): RunningSandbox {
      if (!sandbox) throw new Error('the suite sandbox is started before the tests only');
      return sandbox;
    },
  };
}

/** Files a test has just written are complete: taken, and sent, after a few milliseconds of quiet. */
export const FAST_INTAKE = { stable_ms: 30 };

/** A round of run and watch every 50 ms, not every second: a CLI test waits for the payouts, not for the loop. */
export const FAST_ENGINE = { loop_ms: 50, polling: { first_window_ms: 60_000, first_window_reads: 3000, later_interval_ms: 1000, reads_per_second: 500 } };

export const template = (name: string): string => fileURLToPath(new URL(`../../fixtures/${name}`, import.meta.url));

/**
 * The template's UK account, then the next ones after it that pass the modulus check under its sort code, each ending
 * in 58 as it does (an ordinary outcome at the sandbox): rows paying distinct accounts, so that a file of many rows is
 * not one payment repeated (a possible duplicate, issue 37). An external id keeps its account within a test file, so
 * that a file submitted again is the same rows.
 */
const gbrAccounts: string[] = [];
const accountOfId = new Map<string, string>();
function gbrAccount(id: string): string {
  const known = accountOfId.get(id);
  if (known !== undefined) return known;
  const index = accountOfId.size;
  for (let next = Number((gbrAccounts[gbrAccounts.length - 1] ?? '66374858').slice(0, 6)) + 1; gbrAccounts.length <= index; next++) {
    const account = `${next}58`;
    if (ukModulusValid('089999', account)) gbrAccounts.push(account);
  }
  accountOfId.set(id, gbrAccounts[index] as string);
  return gbrAccounts[index] as string;
}

/**
 * A batch file of the GBR template's first row (its sender approved at once), once per external id, each paying its
 * own account (the first id met the template's own); returns its path.
 */
export function gbrRowsBatch(dir: string, name: string, externalIds: readonly string[]): string {
  const [header, first] = readFileSync(template('templates/gbr-bank.csv'), 'utf8').split('\n') as [string, string];
  const rest = first.slice(first.indexOf(','));
  const file = join(dir, name);
  writeFileSync(file, `${header}\n${externalIds.map((id) => `"${id.replace(/"/g, '""')}"${rest.replace(',66374958,', `,${gbrAccount(id)},`)}`).join('\n')}\n`);
  return file;
}

/** The store's own SQLite connection, for a test that sets a row as a crash or the passing of time would leave it. */
export const sqliteOf = (store: SqliteStore): Database.Database => (store as unknown as { db: Database.Database }).db;

/**
 * For a run's `endWhen`: `batches` batches taken, and every row of them at rest: settled (final, not sent, held), never
 * to be sent (invalid, refused), held as a possible duplicate, or
 * at the service in a final state or one that waits for a person (manual, error, stuck, exception). The demo batch's
 * rows reach that in well under a second on a quiet machine; a busy one may take many.
 */
export function atRest(ctx: Pick<EngineContext, 'store' | 'sandbox'>, batches = 1): () => boolean {
  const waiting = phaseList([...ATTENTION_STATES, ...FINAL_STATES]);
  const attention = phaseList([...ATTENTION_STATES]);
  // Invalid and refused rows are never sent: at rest from intake on (checking is not: it is still being checked);
  // a possible duplicate waits for a person.
  const resting = phaseList([...SETTLED_PHASES, ...NEVER_SENT_PHASES.filter((phase) => phase !== 'checking'), DUPLICATE_HOLD]);
  return () => {
    const db = sqliteOf(ctx.store);
    if ((db.prepare('SELECT COUNT(*) FROM batches').pluck().get() as number) < batches) return false;
    const moving = db.prepare(`SELECT COUNT(*) FROM rows WHERE phase NOT IN ${resting} AND (state IS NULL OR state NOT IN ${waiting})`).pluck().get();
    if (moving !== 0) return false;
    // A row in a state that needs a person is at rest only where the service will not move it on by itself: the
    // sandbox says so by the next step it has scheduled for the transaction (it retries some errors on to paid). And
    // only once the engine has seen where the service holds it: an error the sandbox has already retried to paid
    // (no next step any more) is not at rest while the row still says error.
    const needPerson = db.prepare(`SELECT transaction_id, state FROM rows WHERE phase NOT IN ${resting} AND state IN ${attention}`).all() as { transaction_id: string; state: string }[];
    return needPerson.every(({ transaction_id, state }) => {
      const held = ctx.sandbox.store.transaction(transaction_id);
      return held !== undefined && held.state === state && (held.next_at ?? null) === null;
    });
  };
}

/** A row claimed `at` (an ISO time): as a claim made that long before a crash and a late restart leaves it. */
export function backdateClaim(store: SqliteStore, batch: string, line: number, at: string): void {
  sqliteOf(store).prepare('UPDATE rows SET created_at = ? WHERE batch_id = ? AND line = ?').run(at, batch, line);
}

export interface EngineContext {
  dir: string;
  /**
   * The engine's time: the test's clock, else a ManualClock starting at the system's time, moved on by the engine's
   * waits and by the test (`advanceClock`) to pass an expiry, a window or a deadline at once instead of waiting for it.
   */
  clock: Clock;
  /** Moves the helper's clock on by `ms` at once (a test that gave its own clock moves that one). */
  advanceClock(ms: number): void;
  workspace: Workspace;
  store: SqliteStore;
  sandbox: RunningSandbox;
  /** Where the engine's client goes: the sandbox, unless a test puts a double in front of it. */
  serviceUrl: string;
  /** Every event the engine logged, in order. */
  events: { event: string; fields: Record<string, unknown> }[];
  drop(source: string, name?: string): void;
  /**
   * `hooks`: what the CLI would hand the run (beforeSending). `endWhen`: the state the test waits for; once it holds
   * (looked at between the run's rounds), the helper's clock is moved past the run's --wait, so the run ends then,
   * and `waitMs` is only the bound, generous for a busy machine, not the time the run takes.
   */
  run(config?: Record<string, unknown>, waitMs?: number, client?: Partial<ClientOptions>, hooks?: Pick<RunDeps, 'beforeSending'> & { endWhen?: () => boolean }): Promise<RunReport>;
  /** A client of the service as the engine has it; `options` change it (a longer timeout for a call a test holds). */
  client(options?: Partial<ClientOptions>): PayoutClient;
  results(batch: string): Promise<Record<string, string>[]>;
  stop(): Promise<void>;
}

/** `clock`: the engine's time (a ManualClock by default, see EngineContext.clock). */
export async function engineContext(sandboxConfig: SandboxConfigInput = {}, options: { clock?: Clock } = {}): Promise<EngineContext> {
  const own = options.clock === undefined ? new ManualClock(Date.now()) : null;
  const clock = options.clock ?? (own as ManualClock);
  // The engine's waits last at most 20 ms here (a run ends as soon as its rows are final), and move the helper's own
  // clock on by what they were for: its time passes only when the engine waits, or when the test moves it.
  const sleep = (ms: number): Promise<void> => {
    own?.advance(Math.max(0, ms));
    return new Promise((resolve) => setTimeout(resolve, Math.min(ms, 20)));
  };
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-engine-'));
  const workspace = openWorkspace(join(dir, 'ws'));
  const store = SqliteStore.open(workspace.database);
  const sandbox = await startSandbox({ config: { ...FAST_SANDBOX, ...sandboxConfig } });
  let dropped = 0;
  const events: EngineContext['events'] = [];
  const newClient = (options: Partial<ClientOptions> = {}): PayoutClient => new PayoutClient({
    baseUrl: context.serviceUrl, credentials: { apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret },
    timeoutMs: 2000, retry: { baseMs: 5, capMs: 50, attempts: 8 }, maxAnswerBytes: 1024 * 1024, ...options,
  });
  const context: EngineContext = {
    dir, clock, workspace, store, sandbox, serviceUrl: sandbox.url, events,
    advanceClock(ms) {
      if (!own) throw new Error('this test gave the engine its own clock: move that one');
      own.advance(ms);
    },
    drop(source, name) {
      dropped += 1;
      const path = join(workspace.folders.inbox, name ?? `batch-${dropped}.csv`);
      copyFileSync(source, path);
    },
    async run(config = {}, waitMs = 5000, clientOptions = {}, hooks = {}) {
      const parsed: Config = configSchema.parse({ ...config, intake: { ...FAST_INTAKE, ...(config.intake as object) }, engine: { ...FAST_ENGINE, ...(config.engine as object) } });
      if (parsed.approvals.enabled) {
        const policy = approvalPolicy(parsed.approvals, dir);
        if (typeof policy === 'string') throw new Error(policy);
        parsed.approvalPolicy = policy;
      }
      const client = newClient(clientOptions);
      const { endWhen, ...runHooks } = hooks;
      if (endWhen && !own) throw new Error('endWhen moves the helper\'s own clock: this test gave the engine another');
      let ended = false;
      const sleepUntilEnded = async (ms: number): Promise<void> => {
        await sleep(ms);
        if (endWhen && !ended && endWhen()) {
          ended = true;
          own?.advance(waitMs + 1);
        }
      };
      try {
        const log = (event: string, fields: Record<string, unknown>): void => void events.push({ event, fields });
        return await runOnce({ workspace, store, client, config: parsed, clock, log, waitMs, tickMs: 5, sleep: sleepUntilEnded, ...runHooks });
      } finally {
        await client.close();
      }
    },
    client: (options) => newClient(options),
    async results(batch) {
      const { parse } = await import('csv-parse/sync');
      const { readFileSync } = await import('node:fs');
      return parse(readFileSync(join(workspace.folders.outbox, `${batch}.results.csv`)), { columns: true }) as Record<string, string>[];
    },
    async stop() {
      await store.close();
      await sandbox.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return context;
}

/**
 * A run on the system's time (for what is checked against real time: signed approvals, file times) that ends once
 * `done` holds, looked at after each of its waits (at most 20 ms each): its clock then jumps past the run's `waitMs`,
 * which is only the bound, never a time waited out. `laterMs`: the run starts that much after the time now.
 */
export function endingRun(done: () => boolean | Promise<boolean>, waitMs: number, laterMs = 0): Pick<RunDeps, 'clock' | 'sleep' | 'waitMs'> {
  let ahead = laterMs;
  return {
    waitMs,
    clock: { now: () => Date.now() + ahead },
    sleep: async (ms) => {
      await new Promise((resolve) => setTimeout(resolve, Math.min(ms, 20)));
      if (ahead === laterMs && (await done())) ahead = laterMs + waitMs + 1;
    },
  };
}

/** Debits per transaction in the sandbox's ledger: "nothing paid twice" made checkable. */
export function debitsPerTransaction(sandbox: RunningSandbox): Map<string, number> {
  const debits = new Map<string, number>();
  for (const entry of sandbox.store.ledger(0, 1_000_000)) {
    if (entry.kind === 'debit' && entry.transaction_id) debits.set(entry.transaction_id, (debits.get(entry.transaction_id) ?? 0) + 1);
  }
  return debits;
}
