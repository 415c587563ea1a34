/**
 * `paybatch run`'s use case: take every file in the inbox, finish what a crash
 * left in flight, send the ready rows, follow every row until it is final or the
 * wait ends, and write the results. A batch whose rows are all final is settled
 * and its file moved to archive/.
 */
import { readdir, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { PayoutClient } from '../api/client.js';
import type { ResultRow } from '../reports/results.js';
import { resultState, writeResults, writeSummary } from '../reports/results.js';
import type { IntakeStore, PipelineStore } from '../store/store.js';
import type { Workspace } from '../workspace/workspace.js';
import type { IntakeOutcome } from './intake.js';
import { claimName, recoverInterruptedIntakes, takeFile } from './intake.js';
import type { PipelineLog } from './pipeline.js';
import { Pipeline } from './pipeline.js';

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

export interface BatchSummary {
  batch: string;
  file: string;
  status: string;
  rows: number;
  by_state: Record<string, number>;
  /** Input currency to the amount funded (debited), minor units. */
  funded: Record<string, string>;
  /** Output currency to the amount paid out, minor units. */
  paid_out: Record<string, string>;
  unsettled: number;
  received_at: string;
  settled_at: string | null;
  results_file: string;
}

export interface RunReport {
  intake: IntakeOutcome[];
  batches: BatchSummary[];
}

const RESULTS_EVERY_MS = 5000;

/** CSV files in the inbox, oldest first; hidden and other files are left alone. */
async function inboxFiles(inbox: string): Promise<string[]> {
  const names = (await readdir(inbox)).filter((n) => !n.startsWith('.') && n.toLowerCase().endsWith('.csv'));
  const dated = await Promise.all(names.map(async (name) => ({ name, at: (await stat(join(inbox, name))).mtimeMs })));
  return dated.sort((a, b) => a.at - b.at || a.name.localeCompare(b.name)).map((d) => join(inbox, d.name));
}

const add = (totals: Map<string, bigint>, currency: string | null, amount: string | null): void => {
  if (currency && amount) totals.set(currency, (totals.get(currency) ?? 0n) + BigInt(amount));
};
const asRecord = (totals: Map<string, bigint>): Record<string, string> =>
  Object.fromEntries([...totals.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([c, v]) => [c, v.toString()]));

/** Writes a batch's result file and summary in one pass over its rows. */
async function report(deps: RunDeps, batchId: string): Promise<BatchSummary> {
  const batch = await deps.store.batch(batchId);
  const byState: Record<string, number> = {};
  const funded = new Map<string, bigint>();
  const paid = new Map<string, bigint>();
  let rows = 0;
  async function* counted(): AsyncIterable<ResultRow> {
    for await (const row of deps.store.resultRows(batchId)) {
      rows += 1;
      const state = resultState(row);
      byState[state] = (byState[state] ?? 0) + 1;
      if (row.phase === 'funded' || (row.phase === 'final' && row.state !== 'canceled')) add(funded, row.input_currency, row.input_amount);
      if (row.state === 'paid') add(paid, row.output_currency, row.output_amount);
      yield row;
    }
  }
  const resultsFile = await writeResults(deps.workspace.folders.outbox, batchId, counted());
  const summary: BatchSummary = {
    batch: batchId,
    file: batch?.file_name ?? '',
    status: batch?.status ?? 'unknown',
    rows,
    by_state: Object.fromEntries(Object.entries(byState).sort(([a], [b]) => a.localeCompare(b))),
    funded: asRecord(funded),
    paid_out: asRecord(paid),
    unsettled: await deps.store.unsettledRows(batchId),
    received_at: batch?.received_at ?? '',
    settled_at: batch?.settled_at ?? null,
    results_file: resultsFile,
  };
  await writeSummary(deps.workspace.folders.outbox, batchId, summary);
  return summary;
}

/**
 * Settles a batch whose rows are all final. In this order, so that a crash at
 * any point only repeats steps on the next run: the final results are written,
 * the file is archived, and only then is the batch marked settled (a settled
 * batch is not looked at again). Returns true when the batch is settled.
 */
async function settleIfDone(deps: RunDeps, batchId: string): Promise<boolean> {
  if ((await deps.store.unsettledRows(batchId)) > 0) return false;
  const batch = await deps.store.batch(batchId);
  if (!batch || batch.status !== 'accepted') return batch?.status === 'settled';
  await report(deps, batchId);
  const name = claimName(batch.file_name, Date.parse(batch.received_at));
  await rename(join(deps.workspace.folders.processing, name), join(deps.workspace.folders.archive, name)).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error; // archived already, before a crash
  });
  await deps.store.settleBatch(batchId, new Date(deps.clock.now()).toISOString());
  deps.log('batch_settled', { batch: batchId });
  return true;
}

export async function runOnce(deps: RunDeps): Promise<RunReport> {
  const intake: IntakeOutcome[] = [];
  const recovered = await recoverInterruptedIntakes({ ...deps, knownBatches: () => deps.store.batchesInProcessing() });
  for (const batch of recovered) deps.log('intake_interrupted', { batch, action: 'file put back in the inbox' });
  for (const file of await inboxFiles(deps.workspace.folders.inbox)) {
    const outcome = await takeFile(file, {
      workspace: deps.workspace, store: deps.store, batch: deps.config.batch, policy: deps.config.batch.invalid_rows, clock: deps.clock, force: deps.force,
    });
    deps.log(`intake_${outcome.kind}`, { ...('batch' in outcome ? { batch: outcome.batch } : {}), file: 'file' in outcome ? outcome.file : outcome.name });
    intake.push(outcome);
  }
  const pipeline = new Pipeline({ store: deps.store, client: deps.client, clock: deps.clock, engine: deps.config.engine, log: deps.log, sleep: deps.sleep });
  await pipeline.resume();
  const open = (await deps.store.openBatches()).map((b) => b.id);
  for (const batch of open) await pipeline.submit(batch);

  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const until = deps.clock.now() + deps.waitMs;
  const { reads_per_second } = deps.config.engine.polling;
  let pending = [...open];
  let lastResults = deps.clock.now();
  while (pending.length > 0) {
    const stillOpen: string[] = [];
    for (const batch of pending) if (!(await settleIfDone(deps, batch))) stillOpen.push(batch);
    pending = stillOpen;
    if (pending.length === 0 || deps.clock.now() >= until) break;
    if (deps.clock.now() - lastResults >= RESULTS_EVERY_MS) {
      // Results follow the states as they change, not only at the end.
      for (const batch of pending) await report(deps, batch);
      lastResults = deps.clock.now();
    }
    const read = await pipeline.follow();
    // [D17] N reads cost N / reads_per_second seconds: the average rate stays within the budget.
    await sleep(Math.max(deps.tickMs ?? 1000, Math.ceil((read * 1000) / reads_per_second)));
  }
  const touched = new Set([...open, ...intake.flatMap((o) => ('batch' in o && o.kind === 'accepted' ? [o.batch] : []))]);
  const batches: BatchSummary[] = [];
  for (const batch of touched) batches.push(await report(deps, batch));
  return { intake, batches };
}
