/**
 * `paybatch run`'s use case: take every file in the inbox, finish what a crash
 * left in flight, send the ready rows, follow every row until it is final or the
 * wait ends, and write the results. A batch whose rows are all final is settled
 * and its file moved to archive/.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { PayoutClient } from '../api/client.js';
import type { IntakeStore, PipelineStore } from '../store/store.js';
import type { Workspace } from '../workspace/workspace.js';
import type { IntakeOutcome } from './intake.js';
import { recoverInterruptedIntakes, takeFile } from './intake.js';
import type { PipelineLog } from './pipeline.js';
import { Pipeline } from './pipeline.js';
import type { BatchSummary } from './settle.js';
import { settleIfDone, writeBatchResults } from './settle.js';

export type { BatchSummary } from './settle.js';

export interface RunDeps {
  workspace: Workspace;
  /** The narrow store interface (STYLE 3): SQLite today, another store later. */
  store: IntakeStore & PipelineStore;
  client: PayoutClient;
  config: Config;
  clock: Clock;
  log: PipelineLog;
  /** Take files even when their content was taken before. */
  force?: boolean;
  /** How long to follow rows that are not final yet, in ms. */
  waitMs: number;
  /** How long to pause between rounds of reads. */
  tickMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

export interface RunReport {
  intake: IntakeOutcome[];
  batches: BatchSummary[];
  /** Why the service stopped answering, when the last steps all failed for it; null otherwise. */
  serviceTrouble: string | null;
}

const RESULTS_EVERY_MS = 5000;

/** CSV files in the inbox, oldest first; hidden and other files are left alone. */
async function inboxFiles(inbox: string): Promise<string[]> {
  const names = (await readdir(inbox)).filter((n) => !n.startsWith('.') && n.toLowerCase().endsWith('.csv'));
  const dated = await Promise.all(names.map(async (name) => ({ name, at: (await stat(join(inbox, name))).mtimeMs })));
  return dated.sort((a, b) => a.at - b.at || a.name.localeCompare(b.name)).map((d) => join(inbox, d.name));
}

/** Takes one file of the inbox in, per the configured policy, and logs what became of it. */
export async function takeInboxFile(file: string, deps: Pick<RunDeps, 'workspace' | 'store' | 'config' | 'clock' | 'log' | 'force'>): Promise<IntakeOutcome> {
  const outcome = await takeFile(file, {
    workspace: deps.workspace, store: deps.store, batch: deps.config.batch, policy: deps.config.batch.invalid_rows, clock: deps.clock, force: deps.force,
  });
  deps.log(`intake_${outcome.kind}`, { ...('batch' in outcome ? { batch: outcome.batch } : {}), file: 'file' in outcome ? outcome.file : outcome.name });
  return outcome;
}

/** How often, within a run, rows whose step was deferred (left in creating or funding) are taken up again. */
const RETRY_STALLED_MS = 10_000;

export async function runOnce(deps: RunDeps): Promise<RunReport> {
  const intake: IntakeOutcome[] = [];
  const recovered = await recoverInterruptedIntakes({ ...deps, knownBatches: () => deps.store.batchesInProcessing() });
  for (const batch of recovered) deps.log('intake_interrupted', { batch, action: 'file put back in the inbox' });
  for (const file of await inboxFiles(deps.workspace.folders.inbox)) intake.push(await takeInboxFile(file, deps));
  const pipeline = new Pipeline({ store: deps.store, client: deps.client, clock: deps.clock, engine: deps.config.engine, log: deps.log });
  const until = deps.clock.now() + deps.waitMs;
  // No call, retry or Retry-After waits past the end of --wait.
  pipeline.setDeadline(until);
  await pipeline.resume();
  const open = (await deps.store.openBatches()).map((b) => b.id);
  for (const batch of open) await pipeline.submit(batch);

  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const { reads_per_second } = deps.config.engine.polling;
  let pending = [...open];
  let lastResults = deps.clock.now();
  let lastRetry = deps.clock.now();
  while (pending.length > 0) {
    const stillOpen: string[] = [];
    for (const batch of pending) if (!(await settleIfDone(deps, batch))) stillOpen.push(batch);
    pending = stillOpen;
    if (pending.length === 0 || deps.clock.now() >= until) break;
    await pipeline.heartbeat();
    if (deps.clock.now() - lastResults >= RESULTS_EVERY_MS) {
      // Results follow the states as they change, not only at the end.
      for (const batch of pending) await writeBatchResults(deps, batch);
      lastResults = deps.clock.now();
    }
    if (deps.clock.now() - lastRetry >= RETRY_STALLED_MS) {
      // A step that failed (the service did not answer) is taken up again within the same run.
      const taken = await pipeline.retryStalled();
      if (taken > 0) deps.log('stalled_rows_retried', { rows: taken });
      for (const batch of pending) if ((await deps.store.rowsInPhases(batch, ['ready'], 0, 1)).length > 0) await pipeline.submit(batch);
      lastRetry = deps.clock.now();
    }
    const read = await pipeline.follow();
    // [D17] N reads cost N / reads_per_second seconds: the average rate stays within the budget.
    await sleep(Math.min(Math.max(deps.tickMs ?? 1000, Math.ceil((read * 1000) / reads_per_second)), Math.max(0, until - deps.clock.now())));
  }
  await pipeline.idle();
  await pipeline.heartbeat();
  const touched = new Set([...open, ...intake.flatMap((o) => ('batch' in o && o.kind === 'accepted' ? [o.batch] : []))]);
  const batches: BatchSummary[] = [];
  for (const batch of touched) batches.push(await writeBatchResults(deps, batch));
  return { intake, batches, serviceTrouble: pipeline.serviceTrouble() };
}
