/**
 * `paybatch run`'s use case: take every file in the inbox, finish what a crash
 * left in flight, send the ready rows, follow every row until it is final or the
 * wait ends, and write the results. A batch whose rows are all final is settled
 * and its file moved to archive/.
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { PayoutClient } from '../api/client.js';
import { DUPLICATE_HOLD, UNSETTLED_PHASES } from '../payout-states.js';
import type { ApprovalStore, AuditStore, DuplicateStore, IntakeStore, PipelineStore, WebhookStore } from '../store/port.js';
import { ApprovalGate, RELEASE_SEAL } from './approval-gate.js';
import type { Workspace } from '../workspace/workspace.js';
import type { IntakeOutcome } from './intake.js';
import { takeFile } from './intake.js';
import { recoverInterruptedIntakes } from './intake-recovery.js';
import { releaseBatch } from './release.js';
import type { Seen } from '../workspace/arrival.js';
import { notABatchFile } from '../workspace/arrival.js';
import type { PipelineLog } from './pipeline.js';
import { Pipeline } from './pipeline.js';
import type { BatchSummary } from './settle.js';
import { resultsRepeat, settleIfDone, writeBatchResults } from './settle.js';
import type { SharedWork } from './shared-work.js';
import type { BatchStage } from './batch-stage.js';
import { canMoveOnItsOwn, stageWords } from './batch-stage.js';
import { fileWait, lookAgainInMs, mayBeTakenBy } from './file-wait.js';
import type { RunStopper } from './run-stopper.js';
import { mayApprove, readBatchStage } from './stage-facts.js';

export type { BatchSummary } from './settle.js';

export interface RunDeps {
  workspace: Workspace;
  /** The narrow store interface (STYLE 3): SQLite today, another store later. */
  store: IntakeStore & PipelineStore & ApprovalStore & AuditStore & DuplicateStore & WebhookStore;
  client: PayoutClient;
  config: Config;
  clock: Clock;
  log: PipelineLog;
  /** Take files even when their content was taken before. */
  force?: boolean;
  /** How long to follow rows that are not final yet, in ms. */
  waitMs: number;
  /** How long to pause between rounds of reads; engine.loop_ms when absent. */
  tickMs?: number;
  sleep?: (ms: number) => Promise<void>;
  /** Several workers on PostgreSQL: this one (see shared-work.ts). */
  shared?: SharedWork | null;
  /** Where what a person should know while the run goes on is said (a file waited for, a stop before --wait ends). */
  say?: (line: string) => void;
  /** Told what the run is doing now, in a few words (for what Ctrl-C says it stopped). */
  doing?: (what: string) => void;
  /** Process tuning for sending, set up by the CLI (see PipelineDeps.beforeSending). */
  beforeSending?: () => void;
  /** Given the run's engine once it has one, for Ctrl-C to stop it before the session lets go (run-stopper.ts). */
  stopper?: RunStopper;
}

export interface RunReport {
  intake: IntakeOutcome[];
  batches: BatchSummary[];
  /** Why the service stopped answering, when the last steps all failed for it; null otherwise. */
  serviceTrouble: string | null;
  /** Each batch's stage at the end (see batch-stage.ts), by batch id. */
  stages: Record<string, BatchStage>;
  /** Files of the inbox not taken: what each waits for (see file-wait.ts), by file name. */
  fileWaits: Record<string, string>;
  /** Why the run stopped before --wait ended (nothing could move without a person), or null. */
  stoppedEarly: string | null;
}

const RESULTS_EVERY_MS = 5000;

/** CSV files in the inbox, oldest first; hidden and other files are left alone. */
async function inboxFiles(inbox: string): Promise<string[]> {
  const names = (await readdir(inbox)).filter((n) => notABatchFile(n) === null);
  const dated = await Promise.all(names.map(async (name) => ({ name, at: (await stat(join(inbox, name))).mtimeMs })));
  return dated.sort((a, b) => a.at - b.at || a.name.localeCompare(b.name)).map((d) => join(inbox, d.name));
}

/** Takes one file of the inbox in, per the configured policy, and logs what became of it. */
export async function takeInboxFile(file: string, deps: Pick<RunDeps, 'workspace' | 'store' | 'config' | 'clock' | 'log' | 'force' | 'shared'> & { stableMs?: number }, before?: Seen): Promise<IntakeOutcome> {
  const outcome = await takeFile(file, {
    workspace: deps.workspace, store: deps.store, batch: deps.config.batch, intake: deps.config.intake, stableMs: deps.stableMs, shared: deps.shared,
    policy: deps.config.batch.invalid_rows, clock: deps.clock, force: deps.force, log: deps.log,
    approval: deps.config.approvalPolicy ? { submitter: deps.config.approvalPolicy.inboxSubmitter, expiresAfterMs: deps.config.approvalPolicy.expiresAfterMs } : undefined,
  }, before);
  await deps.store.appendAudit({
    at: new Date(deps.clock.now()).toISOString(), actor: deps.config.approvalPolicy?.inboxSubmitter ?? 'inbox', action: `intake_${outcome.kind}`, subject: basename(file),
    details: intakeDetails(outcome),
  });
  if (outcome.kind === 'accepted' && outcome.ready > 0 && deps.config.approvalPolicy) {
    const record = await deps.store.batch(outcome.batch);
    const stage = record ? stageWords((await readBatchStage(deps.store, record, deps.clock.now(), mayApprove(deps.config.approvalPolicy))).stage) : undefined;
    deps.log('approval_requested', { batch: outcome.batch, file: basename(file), preview: `paybatch preview ${outcome.batch}`, ...(stage ? { stage } : {}) });
  }
  // A first look at a file is not news; still waiting at a later look is.
  if (outcome.kind === 'waiting' && !before) return outcome;
  deps.log(`intake_${outcome.kind}`, {
    ...('batch' in outcome ? { batch: outcome.batch } : {}), file: 'file' in outcome ? outcome.file : outcome.name,
    ...('reason' in outcome ? { reason: outcome.reason } : {}),
    ...(outcome.kind === 'unreadable' ? { reason: `${outcome.error.code}: ${outcome.error.message}` } : {}),
    ...(outcome.kind === 'rejected' ? { reason: `${outcome.report.invalid} invalid rows (batch.invalid_rows reject_file)` } : {}),
    ...('reportFile' in outcome ? { report: outcome.reportFile } : {}), ...('noteFile' in outcome ? { note: outcome.noteFile } : {}),
  });
  return outcome;
}

/** What the audit trail keeps of an intake: the batch, the file's fingerprint, the validation's counts, why not taken. */
function intakeDetails(outcome: IntakeOutcome): Record<string, unknown> {
  const details: Record<string, unknown> = { batch: 'batch' in outcome ? outcome.batch : null };
  if (outcome.kind === 'accepted' || outcome.kind === 'rejected') {
    Object.assign(details, { sha256: outcome.report.sha256, rows: outcome.report.rows, valid: outcome.report.valid, invalid: outcome.report.invalid, totals: outcome.report.totals });
  }
  if (outcome.kind === 'accepted') Object.assign(details, { ready: outcome.ready, refused: outcome.refused });
  if ('reason' in outcome) details.reason = outcome.reason;
  if (outcome.kind === 'unreadable') details.reason = `${outcome.error.code}: ${outcome.error.message}`;
  return details;
}

/**
 * Takes the inbox in: every complete file at once; a file not complete yet
 * (still being written, or waiting for its marker) is looked at again while
 * --wait lasts, and otherwise left for the next run.
 */
async function takeInbox(deps: RunDeps, until: number, sleep: (ms: number) => Promise<void>, waits: Record<string, string>): Promise<IntakeOutcome[]> {
  const taken: IntakeOutcome[] = [];
  let files = await inboxFiles(deps.workspace.folders.inbox);
  const seen = new Map<string, Seen>();
  const policy = { stableMs: deps.config.intake.stable_ms, marker: deps.config.intake.marker, manifest: deps.config.intake.manifest };
  for (;;) {
    const waiting: { file: string; retryInMs: number; outcome: IntakeOutcome; movable: boolean }[] = [];
    for (const file of files) {
      const outcome = await takeInboxFile(file, deps, seen.get(file));
      if (outcome.kind === 'waiting') {
        seen.set(file, outcome.seen);
        const wait = fileWait(outcome.name, outcome.seen, policy);
        // Said once per file, and again when what it waits for changes (the file moved on, its wait with it).
        if (waits[outcome.name] !== wait.line) deps.say?.(wait.line);
        waits[outcome.name] = wait.line;
        const retryInMs = lookAgainInMs(outcome.seen, outcome.retryInMs, policy);
        waiting.push({ file, retryInMs, outcome, movable: mayBeTakenBy(wait, outcome.seen, policy, deps.clock.now(), until) });
      } else {
        delete waits[basename(file)];
        taken.push(outcome);
      }
    }
    if (waiting.length === 0) return taken;
    const soonest = Math.min(...waiting.map((w) => w.retryInMs));
    // Nothing waited for can be taken before --wait ends: the next run takes it.
    if (deps.clock.now() + soonest > until || !waiting.some((w) => w.movable)) return [...taken, ...waiting.map((w) => w.outcome)];
    deps.doing?.(`waiting for ${waiting.length === 1 ? 'a file' : `${waiting.length} files`} of the inbox to be whole`);
    await sleep(soonest);
    files = waiting.map((w) => w.file);
  }
}

/**
 * Sends a batch once released: its file watched for a while longer once taken
 * (see release.ts). Waits for that in `run`, which has nothing else to do.
 */
async function sendWhenReleased(pipeline: Pipeline, gate: ApprovalGate, batchId: string, deps: RunDeps, until: number, sleep: (ms: number) => Promise<void>): Promise<void> {
  for (;;) {
    const batch = await deps.store.batch(batchId);
    if (!batch || batch.status !== 'accepted') return;
    const release = await releaseBatch(batch, { ...deps, gate });
    if (release.kind === 'withdrawn') deps.log('intake_withdrawn', { batch: batchId, file: batch.file_name, reason: release.reason });
    if (release.kind === 'held') deps.log('approval_held', { batch: batchId, reason: release.reason, not_sent: release.notSent });
    if (release.kind !== 'wait') break;
    // Awaiting approval: nothing of it moves before a person signs; `run` does not wait for that (see runOnce).
    if (release.on === 'approval') return;
    if (deps.clock.now() >= until) return;
    await sleep(Math.min(release.untilMs - deps.clock.now(), until - deps.clock.now(), 1000));
  }
  await pipeline.submit(batchId);
}

/** Phases paybatch itself works on: a batch with none left waits only for a person. */
const WORKED_PHASES = UNSETTLED_PHASES.filter((phase) => phase !== DUPLICATE_HOLD);

/** How often, within a run, rows whose step was deferred (left in creating or funding) are taken up again. */
const RETRY_STALLED_MS = 10_000;

export async function runOnce(deps: RunDeps): Promise<RunReport> {
  const intake: IntakeOutcome[] = [];
  const recovered = await recoverInterruptedIntakes({ ...deps, knownBatches: () => deps.store.batchesInProcessing() });
  for (const batch of recovered) deps.log('intake_interrupted', { batch, action: 'file put back in the inbox' });
  const until = deps.clock.now() + deps.waitMs;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const fileWaits: Record<string, string> = {};
  deps.doing?.('taking the inbox in');
  intake.push(...(await takeInbox(deps, until, sleep, fileWaits)));
  const gate = new ApprovalGate(deps.config.approvalPolicy, deps.store, deps.clock, deps.config.approvals.estimate_rates, deps.client.derivedKey(RELEASE_SEAL));
  const pipeline = new Pipeline({ store: deps.store, client: deps.client, clock: deps.clock, engine: deps.config.engine, log: deps.log, gate, shared: deps.shared ?? undefined, beforeSending: deps.beforeSending });
  // No call, retry or Retry-After waits past the end of --wait.
  pipeline.setDeadline(until);
  deps.stopper?.attach(pipeline);
  deps.doing?.('sending');
  await pipeline.resume();
  const open = (await deps.store.openBatches()).map((b) => b.id);
  for (const batch of open) await sendWhenReleased(pipeline, gate, batch, deps, until, sleep);
  const stoppedEarly = await followUntilFinal(pipeline, gate, open, deps, until, sleep);
  await pipeline.idle();
  await pipeline.heartbeat();
  const touched = new Set([...open, ...intake.flatMap((o) => ('batch' in o && o.kind === 'accepted' ? [o.batch] : []))]);
  const batches: BatchSummary[] = [];
  const stages: Record<string, BatchStage> = {};
  for (const batch of touched) {
    batches.push(await writeBatchResults(deps, batch));
    const record = await deps.store.batch(batch);
    if (record) stages[batch] = (await readBatchStage(deps.store, record, deps.clock.now(), mayApprove(deps.config.approvalPolicy))).stage;
  }
  const left = batches.some((b) => b.unsettled > 0 && stages[b.batch] !== undefined && canMoveOnItsOwn(stages[b.batch] as BatchStage));
  return { intake, batches, serviceTrouble: pipeline.serviceTrouble(left), stages, fileWaits, stoppedEarly };
}

/**
 * Follows the open batches until every row is final or --wait ends, or until nothing of them can move without a
 * person (all awaiting approval, rejected or held): returns why it stopped early then, null otherwise.
 */
async function followUntilFinal(pipeline: Pipeline, gate: ApprovalGate, open: readonly string[], deps: RunDeps, until: number, sleep: (ms: number) => Promise<void>): Promise<string | null> {
  let pending = [...open];
  const results = resultsRepeat(RESULTS_EVERY_MS, deps.clock.now());
  let lastRetry = deps.clock.now();
  let lookAtStages = true;
  deps.doing?.('following the rows sent');
  while (pending.length > 0) {
    const stillOpen: string[] = [];
    for (const batch of pending) {
      if (await settleIfDone(deps, batch)) continue;
      // Rows held as possible duplicates wait for a person (paybatch allow), not for the service: not waited for here.
      if ((await deps.store.rowsInPhases(batch, WORKED_PHASES, 0, 1)).length === 0) deps.log('duplicates_held', { batch, action: `paybatch preview ${batch}; paybatch allow ${batch} --external-id ID --reason TEXT --as NAME` });
      else stillOpen.push(batch);
    }
    pending = stillOpen;
    if (pending.length === 0 || deps.clock.now() >= until) break;
    if (lookAtStages) {
      const stuck = await nothingCanMove(deps, pending);
      if (stuck) {
        deps.say?.(stuck);
        return stuck;
      }
      lookAtStages = false;
    }
    await pipeline.heartbeat();
    if (results.due(deps.clock.now())) {
      // Results follow the states as they change, not only at the end.
      const started = deps.clock.now();
      for (const batch of pending) await writeBatchResults(deps, batch);
      results.ran(started, deps.clock.now());
    }
    if (deps.clock.now() - lastRetry >= RETRY_STALLED_MS) {
      // A step that failed (the service did not answer) is taken up again within the same run.
      const taken = await pipeline.retryStalled();
      if (taken > 0) deps.log('stalled_rows_retried', { rows: taken });
      for (const batch of pending) if ((await deps.store.rowsInPhases(batch, ['ready'], 0, 1)).length > 0) await sendWhenReleased(pipeline, gate, batch, deps, until, sleep);
      lastRetry = deps.clock.now();
      lookAtStages = true;
    }
    const read = await pipeline.follow();
    // [D17] N reads cost N / (this worker's share of reads_per_second) seconds: the average rate stays within the budget.
    await sleep(Math.min(Math.max(deps.tickMs ?? deps.config.engine.loop_ms, pipeline.readsCostMs(read)), Math.max(0, until - deps.clock.now())));
  }
  return null;
}

/** Why nothing of the pending batches can move without a person (each batch and its stage), or null when something can. */
async function nothingCanMove(deps: RunDeps, pending: readonly string[]): Promise<string | null> {
  const stuck: string[] = [];
  for (const id of pending) {
    const record = await deps.store.batch(id);
    if (!record) continue;
    const { stage } = await readBatchStage(deps.store, record, deps.clock.now(), mayApprove(deps.config.approvalPolicy));
    if (canMoveOnItsOwn(stage)) return null;
    stuck.push(`${id} ${stageWords(stage)}`);
  }
  return stuck.length > 0 ? `stopped waiting: nothing more can move without a person (${stuck.join('; ')})` : null;
}
