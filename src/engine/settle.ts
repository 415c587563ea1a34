/**
 * A batch's result file and summary, and its settlement once every row is final.
 * Shared by `run` and `watch`.
 */
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import type { BatchConfig, ReportsConfig } from '../config/config.js';
import { readerOptions } from '../batch/batch-options.js';
import { answersWithPain002, writePain002 } from './pain002-file.js';
import type { ResultRow } from '../store/port.js';
import { writeResults, writeSummary } from '../reports/results.js';
import { BatchTally } from '../reports/batch-tally.js';
import type { AuditStore, BatchRecord, IntakeStore, PipelineStore, WebhookStore } from '../store/port.js';
import { batchView } from './batch-view.js';
import type { Workspace } from '../workspace/workspace.js';
import { claimName, claimedAtOf } from './intake.js';
import { moveIfPresent, moveWithCompanions } from './claimed-file-moves.js';
import { checkBeforeArchiving } from './archive-check.js';
import { readdir } from 'node:fs/promises';
import { companionOf } from '../workspace/arrival.js';
import type { PipelineLog } from './pipeline.js';
import { existsSync } from 'node:fs';
import type { SharedWork } from './shared-work.js';
import { restoreKeptFile } from './file-bytes-in-database.js';
import { RepeatBoundedByCost } from './repeat-bounded-by-cost.js';

export interface SettleDeps {
  workspace: Workspace;
  store: IntakeStore & PipelineStore & AuditStore & WebhookStore;
  clock: Clock;
  log: PipelineLog;
  /** Several workers: a file taken in on another machine is archived here from the bytes kept in the database. */
  shared?: SharedWork | null;
  /** reports.results_xlsx: the final results as a workbook too; batch: how a pain.001 is read again for its pain.002. */
  config?: { reports: Pick<ReportsConfig, 'results_xlsx'>; batch?: BatchConfig };
}

export interface BatchSummary {
  batch: string;
  file: string;
  status: string;
  rows: number;
  by_state: Record<string, number>;
  /** Rows paybatch refused or held, by reason code: quote_rejected, over_budget, insufficient_funds, answer_mismatch... */
  by_reason: Record<string, number>;
  /** Rows that need a person for money safety: an answer that did not match, a funding refused, the balance run out. */
  need_person: number;
  /** Where its approval stands (null when approvals were off at intake) and why. */
  approval: string | null;
  approval_reason: string | null;
  /** The audit trail's head when the summary was written (see paybatch audit verify). */
  audit_chain_head: { seq: number; hash: string };
  /** Input currency to the amount funded (debited), minor units. */
  funded: Record<string, string>;
  /** Output currency to the amount paid out, minor units. */
  paid_out: Record<string, string>;
  unsettled: number;
  received_at: string;
  settled_at: string | null;
  results_file: string;
}

/** When interim result files are rewritten (run and watch): every `everyMs`, at most a tenth of the time (a million rows take seconds to write). */
export function resultsRepeat(everyMs: number, now: number): RepeatBoundedByCost {
  return new RepeatBoundedByCost(everyMs, 10, now);
}

/**
 * Writes a batch's result file and summary in one pass over its rows; with
 * reports.results_xlsx, the workbook too once every row is final (while rows
 * still move, only the CSV follows them: a workbook costs more to write).
 */
export async function writeBatchResults(deps: SettleDeps, batchId: string): Promise<BatchSummary> {
  const batch = await deps.store.batch(batchId);
  const xlsx = deps.config?.reports.results_xlsx === true && (await deps.store.unsettledRows(batchId)) === 0;
  const tally = new BatchTally();
  async function* counted(): AsyncIterable<ResultRow> {
    for await (const row of deps.store.resultRows(batchId)) {
      tally.add(row);
      yield row;
    }
  }
  const resultsFile = await writeResults(deps.workspace.home, deps.workspace.folders.outbox, batchId, counted(), { xlsx });
  const summary: BatchSummary = {
    batch: batchId,
    file: batch?.file_name ?? '',
    status: batch?.status ?? 'unknown',
    rows: tally.rows,
    by_state: tally.byState,
    by_reason: tally.byReason,
    need_person: tally.needPerson,
    approval: batch?.approval ?? null,
    approval_reason: batch?.approval_reason ?? null,
    audit_chain_head: await deps.store.auditHead('report_written'),
    funded: tally.funded,
    paid_out: tally.paidOut,
    unsettled: await deps.store.unsettledRows(batchId),
    received_at: batch?.received_at ?? '',
    settled_at: batch?.settled_at ?? null,
    results_file: resultsFile,
  };
  await writeSummary(deps.workspace.home, deps.workspace.folders.outbox, batchId, summary);
  return summary;
}

/**
 * Settles a batch whose rows are all final. In this order, so that a crash at
 * any point only repeats steps on the next run: the final results are written,
 * the file is archived, and only then is the batch marked settled (a settled
 * batch is not looked at again). Returns true when the batch is settled.
 */
export async function settleIfDone(deps: SettleDeps, batchId: string): Promise<boolean> {
  if ((await deps.store.unsettledRows(batchId)) > 0) return false;
  const batch = await deps.store.batch(batchId);
  if (!batch || batch.status !== 'accepted') return batch?.status === 'settled';
  await writeBatchResults(deps, batchId);
  const name = claimName(batch.file_name, Date.parse(batch.received_at));
  await checkBeforeArchiving(deps, batch, join(deps.workspace.folders.processing, name), join(deps.workspace.folders.archive, name));
  const archived = join(deps.workspace.folders.archive, name);
  // Not there: archived already, before a crash; or taken in on another machine.
  const moved = await moveIfPresent(join(deps.workspace.folders.processing, name), archived, deps.workspace.home);
  if (!moved && deps.shared && !existsSync(archived)) await restoreKeptFile(deps.shared.store, batch.id, batch.sha256, deps.workspace.home, archived);
  if (answersWithPain002(batch)) await answerPain001(deps, batch, archived);
  await deps.store.settleBatch(batchId, new Date(deps.clock.now()).toISOString());
  deps.log('batch_settled', { batch: batchId });
  await keepSettledView(deps, batchId);
  return true;
}

/**
 * The console's view of the batch (its rows counted by state and reason), made
 * as it settles and kept, so that the first look at a batch of a million rows
 * reads one record instead of walking its rows (batch-view.ts). A view not made
 * here is said, not fatal: the batch is settled, and the console makes the view
 * on its first look.
 */
async function keepSettledView(deps: SettleDeps, batchId: string): Promise<void> {
  try {
    const record = await deps.store.batch(batchId);
    if (record) await batchView(deps.store, deps.clock, record);
  } catch (error) {
    deps.log('batch_view_not_kept', { batch: batchId, reason: (error as Error).message });
  }
}

/**
 * Several workers: a file taken in here whose batch another worker settled
 * (this one was busy, or down) still lies in processing/: it goes to archive/.
 * Returns how many.
 */
export async function archiveSettledElsewhere(deps: SettleDeps): Promise<number> {
  let archived = 0;
  for (const name of await readdir(deps.workspace.folders.processing)) {
    const claimedAt = claimedAtOf(name);
    if (claimedAt === null || companionOf(name) !== null) continue;
    const receivedAt = new Date(claimedAt).toISOString();
    const batch = (await deps.store.recentBatches(receivedAt)).find((b) => b.received_at === receivedAt && claimName(b.file_name, claimedAt) === name);
    if (batch?.status !== 'settled') continue;
    await moveWithCompanions(join(deps.workspace.folders.processing, name), join(deps.workspace.folders.archive, name), deps.workspace.home);
    archived += 1;
  }
  return archived;
}

/** A batch from a pain.001 is answered with its pain.002 once settled; a report that cannot be written is said, not fatal. */
async function answerPain001(deps: SettleDeps, batch: BatchRecord, archived: string): Promise<void> {
  const reader = readerOptions(deps.config?.batch ?? (await import('../config/config.js')).configSchema.parse({}).batch);
  try {
    const file = await writePain002({ workspace: deps.workspace, store: deps.store, clock: deps.clock, reader }, batch, archived);
    deps.log('pain002_written', { batch: batch.id, file });
  } catch (error) {
    deps.log('pain002_not_written', { batch: batch.id, reason: (error as Error).message, action: `paybatch report ${batch.id} --format pain002 writes it again` });
  }
}
