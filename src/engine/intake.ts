/**
 * Taking a file in: claimed from inbox/ by an atomic rename (so two takers never
 * both get it), fingerprinted by SHA-256, refused if the same content was
 * already taken (unless forced), validated row by row into the store, then
 * accepted or rejected per the policy. Nothing is sent from here, and nothing is
 * ever deleted: a refused or rejected file goes to failed/ with a report beside it.
 */
import { checkCorrections } from './correction-intake.js';
import { lstat, readFile, rename } from 'node:fs/promises';
import { moveSafely, writeFileSafely } from '../workspace/safe-files.js';
import { moveWithCompanions, putBack } from './claimed-file-moves.js';
import { basename, join } from 'node:path';
import type { Clock } from '../clock.js';
import type { BatchConfig, IntakeConfig } from '../config/config.js';
import type { Seen } from '../workspace/arrival.js';
import { lookAtInboxFile } from './inbox-look.js';
import { claimName } from './claim-names.js';
import { refuseControlName } from './refused-names.js';
import type { Manifest } from '../batch/manifest.js';
import { compareWithManifest, parseManifest } from '../batch/manifest.js';
import { readerOptions, ruleOptions } from '../batch/batch-options.js';
import { BatchFileError } from '../batch/file-error.js';
import { fileSha256 } from '../batch/file-hash.js';
import type { ValidationReport } from '../batch/validate-file.js';
import { validateFile } from '../batch/validate-file.js';
import type { ApprovalStore, BatchRecord, DuplicateStore, IntakePolicy, IntakeStore, NewRow, PipelineStore } from '../store/port.js';
import { screenDuplicates } from './duplicate-screen.js';
import type { Workspace } from '../workspace/workspace.js';
import type { SharedWork } from './shared-work.js';
import type { PipelineLog } from './pipeline.js';
import { keepFileBytes, keepManifest } from './file-bytes-in-database.js';
import type { IntakeFacts, Refusal } from './intake-plan.js';
import { planIntake } from './intake-plan.js';

export type IntakeOutcome =
  | { kind: 'accepted'; batch: string; file: string; ready: number; refused: number; invalid: number; report: ValidationReport }
  | { kind: 'rejected'; batch: string; file: string; reportFile: string; report: ValidationReport }
  | { kind: 'unreadable'; batch: string; file: string; reportFile: string; error: BatchFileError }
  | { kind: 'duplicate'; file: string; noteFile: string; earlier: BatchRecord }
  | { kind: 'not_read'; file: string; reportFile: string; reason: string }
  /** Not complete yet (still being written, or waiting for its marker or manifest): left in the inbox; `seen` is for the next look. */
  | { kind: 'waiting'; name: string; reason: string; retryInMs: number; seen: Seen }
  /** It changed while it was being taken in (still being written): put back in the inbox, nothing of it sent. */
  | { kind: 'changed'; batch: string; name: string; reason: string }
  | { kind: 'gone'; name: string };

export interface IntakeDeps {
  workspace: Workspace;
  store: IntakeStore & DuplicateStore & Pick<PipelineStore, 'row' | 'unsettledRows'> & Pick<ApprovalStore, 'setApprovalState'>;
  batch: BatchConfig;
  policy: IntakePolicy;
  clock: Clock;
  /** When a file is complete: stability, marker, manifest. */
  intake: IntakeConfig;
  /** The stability interval, when the caller has its own (watch.stable_ms); intake.stable_ms otherwise. */
  stableMs?: number;
  /** Take a file even when the same content was taken before. */
  force?: boolean;
  /** With approvals on: who submits files of the inbox, and how long an approval request lasts. */
  approval?: { submitter: string; expiresAfterMs: number };
  /** With several workers on PostgreSQL: the batch records its taker, and the file's bytes are kept in the database. */
  shared?: SharedWork | null;
  /** Where intake says what a person should know that is not the file's fault (the scratch file refused). */
  log?: PipelineLog;
}

/**
 * Rows stored per transaction. While this thread stores a chunk, the workers checking the file wait for their next
 * piece (see parallel-check.ts), and rows waiting for their chunk are copied by every young-generation collection:
 * a million-row intake took 27.5 to 28.4 s at 500 (three runs), 24.8 and 26.0 at 250, 24.6 and 25.4 at 100; at
 * 1,000, 28.8 and 30.1 s in an earlier comparison.
 */
const STORE_CHUNK = 250;

// Claim names are kept in their own module (refused-names.ts uses them too); re-exported for the engine's other steps.
export { claimName, claimedAtOf } from './claim-names.js';

/** The refusal planned for facts that must refuse the file. */
function refusalOf(facts: IntakeFacts): Refusal {
  const plan = planIntake(facts);
  if (plan.kind !== 'refuse') throw new Error(`intake: a refusal was expected for ${facts.name}, the plan is ${plan.kind}`);
  return plan.refusal;
}

/** The outcome of a refusal planned: its batch rejected (if any), the file moved to failed/ with its report beside it. */
async function applyRefusal(refusal: Refusal, claimed: string, facts: IntakeFacts, deps: IntakeDeps, error?: BatchFileError): Promise<IntakeOutcome> {
  const failedPath = join(deps.workspace.folders.failed, basename(claimed));
  if (refusal.rejectBatch !== null && facts.batch) await deps.store.rejectBatch(facts.batch, refusal.rejectBatch);
  await moveWithCompanions(claimed, failedPath, deps.workspace.home);
  for (const { suffix, text } of refusal.files) await writeFileSafely(deps.workspace.home, `${failedPath}${suffix}`, text);
  const reportFile = `${failedPath}${refusal.files[0]?.suffix ?? ''}`;
  const batch = facts.batch as string;
  switch (refusal.kind) {
    case 'duplicate': return { kind: 'duplicate', file: failedPath, noteFile: reportFile, earlier: facts.earlier as BatchRecord };
    case 'unreadable': return { kind: 'unreadable', batch, file: failedPath, reportFile, error: error as BatchFileError };
    case 'rejected': return { kind: 'rejected', batch, file: failedPath, reportFile, report: facts.report as ValidationReport };
    default: return { kind: 'not_read', file: failedPath, reportFile, reason: refusal.reason };
  }
}

/**
 * Takes a file of the inbox in, if it is complete. `before` is what the caller
 * saw of it the last time it looked (from a 'waiting' outcome): stability is
 * measured from it. Without it, a file complete by stability alone is only seen,
 * and taken at a later look. Each fact learned is put to planIntake; a refusal is
 * applied at once.
 */
export async function takeFile(inboxPath: string, deps: IntakeDeps, before?: Seen): Promise<IntakeOutcome> {
  const name = basename(inboxPath);
  const refused = await refuseControlName(inboxPath, deps);
  if (refused) return refused;
  const look = await lookAtInboxFile(inboxPath, deps, before);
  if (!look) return { kind: 'gone', name };
  const facts: IntakeFacts = { name, readiness: look.readiness, maxFileBytes: deps.batch.max_file_bytes, force: deps.force === true, policy: deps.policy };
  const waiting = planIntake(facts);
  if (waiting.kind === 'wait') return { kind: 'waiting', name, reason: waiting.reason, retryInMs: waiting.retryInMs, seen: look.seen };
  const at = deps.clock.now();
  const claimed = join(deps.workspace.folders.processing, claimName(name, at));
  try {
    await moveSafely(deps.workspace.home, inboxPath, claimed);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'gone', name };
    throw error;
  }
  // The marker and the manifest go with the file, so that the inbox holds no stale "complete" signal.
  if (look.marker) await rename(look.marker, `${claimed}.done`).catch(() => {});
  if (look.manifest) await rename(look.manifest, `${claimed}.manifest.json`).catch(() => {});
  const entry = await lstat(claimed);
  facts.entry = { regularFile: entry.isFile(), size: entry.size };
  let plan = planIntake(facts);
  if (plan.kind === 'refuse') return applyRefusal(plan.refusal, claimed, facts, deps);
  const sha256 = (await fileSha256(claimed)) ?? '';
  Object.assign(facts, { sha256, earlier: await deps.store.acceptedBatchWithContent(sha256) });
  plan = planIntake(facts);
  if (plan.kind === 'refuse') return applyRefusal(plan.refusal, claimed, facts, deps);

  const batch = await deps.store.beginBatch({
    file_name: name, sha256, size_bytes: entry.size, policy: deps.policy, received_at: new Date(at).toISOString(),
    file_mtime_ms: Math.floor(entry.mtimeMs), send_after: at + secondLookAfterMs(look.readiness.ready && look.readiness.by !== 'stable', deps), taken_by: deps.shared?.name ?? null,
  });
  facts.batch = batch;
  try {
    // Shared: the bytes go to the database before any row does, so that any worker can take the file in again.
    if (deps.shared && (await keepFileBytes(deps.shared.store, batch, claimed)) !== sha256) return withdraw(claimed, name, batch, deps, 'it changed while it was read');
    if (deps.shared && look.manifest) await keepManifest(deps.shared.store, batch, `${claimed}.manifest.json`);
    const read = await readIntoStore(claimed, batch, name, deps);
    if (read instanceof BatchFileError) {
      if (await changedSince(claimed, entry)) return withdraw(claimed, name, batch, deps, 'it changed while it was read');
      facts.unreadable = { code: read.code, message: read.message, line: read.line };
      return applyRefusal(refusalOf(facts), claimed, facts, deps, read);
    }
    // The bytes validated are the bytes kept: a file that changed while it was read (a writer still at it) is not taken.
    if (read.report.sha256 !== sha256 || (await changedSince(claimed, entry))) return withdraw(claimed, name, batch, deps, 'it changed while it was read');
    facts.manifestProblems = (await checkManifest(`${claimed}.manifest.json`, { rows: read.rows, totals: read.totals, sha256 })) ?? [];
    facts.report = read.report;
    await deps.store.rowsStored(batch, read.rows);
    plan = planIntake(facts);
    if (plan.kind === 'refuse') return applyRefusal(plan.refusal, claimed, facts, deps);
    // A corrections file: each row checked against its original (a refused one stays unpaid, with why). Asked only of
    // one: finding none in the store reads the whole batch (0.3 s at a million rows).
    if (read.corrections > 0) await checkCorrections(batch, deps.store);
    // Possible duplicate payments, held before the batch is accepted: nothing of it can be sent before this is done.
    const duplicates = await screenDuplicates(batch, at, deps);
    if (duplicates.held + duplicates.warned > 0) deps.log?.('possible_duplicates', { batch, file: name, held: duplicates.held, warned: duplicates.warned, action: `paybatch preview ${batch} lists them; paybatch allow ${batch} --external-id ID --reason TEXT --as NAME sends one` });
    // Before it is accepted: a crash in between leaves an interrupted intake, never a batch sendable without approval.
    if (deps.approval) await deps.store.requestApproval(batch, deps.approval.submitter, new Date(at + deps.approval.expiresAfterMs).toISOString());
    // The same content refused again at acceptance only where rows wait unsendable until then (PostgreSQL, several
    // workers). On SQLite rows are made sendable as they are stored, and of two copies read at once each holds some
    // of them: refusing one would leave its share unpaid. There both are accepted and each row is paid once (its
    // external_id is another batch's in the other: refused); two copies at once there come only from a file dropped
    // twice, the recovery that wrote copies being the workers' own.
    const counts = await deps.store.acceptBatch(batch, { refuseSameContent: !facts.force && deps.shared !== undefined });
    if (!counts || 'sameContentAs' in counts) return notAccepted(counts, claimed, facts, deps);
    // Nothing to send (every row invalid, or its external_id used by an earlier batch): nothing for anyone to approve.
    // A row held as a possible duplicate may be sent once allowed: its batch still needs its approval.
    if (deps.approval && counts.ready === 0 && (duplicates.held === 0 || (await deps.store.unsettledRows(batch)) === 0)) {
      await deps.store.setApprovalState(batch, 'not_needed', nothingToSend(counts));
    }
    return { kind: 'accepted', batch, file: claimed, ...counts, report: read.report };
  } catch (error) {
    // Not the file's fault (those end above as a rejected batch): the batch stays in intake for the next start to
    // recover, and gives back the external ids of its rows stored sendable meanwhile.
    await deps.store.suspendIntake(batch).catch(() => {});
    throw error;
  }
}

/**
 * A batch the acceptance did not accept: recovered as interrupted by another worker meanwhile (null), or another copy
 * of the same content accepted while this one was read (two copies taken in at once: one written back after a
 * takeover, one its worker had claimed). Its rows held as possible duplicates end with this copy, and the batch with
 * them. One content, one batch.
 */
async function notAccepted(outcome: { sameContentAs: BatchRecord } | null, claimed: string, facts: IntakeFacts, deps: IntakeDeps): Promise<IntakeOutcome> {
  await deps.store.endHeldDuplicates(facts.batch as string, null, null);
  if (outcome) facts.earlier = outcome.sameContentAs;
  return applyRefusal(refusalOf(outcome ? facts : { ...facts, recoveredElsewhere: true }), claimed, facts, deps);
}

/** What reading a file into the store found: its report, and its figures for a manifest; or why it cannot be read at all. */
interface RowsRead {
  report: ValidationReport;
  /** Every data row, and every amount that could be read, for its manifest. */
  rows: number;
  totals: Map<string, bigint>;
  /** Rows naming an original to pay again: only then is the file checked as a corrections file. */
  corrections: number;
}

/** Checks the file row by row and stores its rows, STORE_CHUNK to a transaction. */
async function readIntoStore(claimed: string, batch: string, name: string, deps: IntakeDeps): Promise<RowsRead | BatchFileError> {
  let pending: NewRow[] = [];
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    const rows = pending;
    pending = [];
    await deps.store.addRows(batch, rows);
  };
  const read = { rows: 0, totals: new Map<string, bigint>(), corrections: 0 };
  try {
    const report = await validateFile(claimed, {
      reader: readerOptions(deps.batch),
      rules: ruleOptions(deps.batch, deps.clock),
      maxReportedIssues: deps.batch.max_reported_issues,
    }, {
      async row(checked) {
        read.rows += 1;
        if (checked.amount) read.totals.set(checked.amount.currency, (read.totals.get(checked.amount.currency) ?? 0n) + checked.amount.minor);
        const origin = checked.origin();
        if (origin !== null && origin !== 'malformed') read.corrections += 1;
        const malformed = origin === 'malformed'
          ? [{ line: checked.line, column: 'original_line', code: 'original_malformed', message: 'original_batch and original_line name the row a correction pays again: both, a batch id and a line number' }]
          : [];
        // The request as stored: made on the worker thread that checked the row, when one did (no JSON made twice).
        const stored = checked.valid && malformed.length === 0 ? checked.stored() : null;
        pending.push({
          line: checked.line, external_id: checked.externalId, request: null, stored, errors: [...checked.errors, ...malformed],
          original: origin === 'malformed' ? null : origin, fields: stored ? null : checked.fields(),
        });
        if (pending.length >= STORE_CHUNK) await flush();
      },
      async late(finding) {
        if (finding.severity !== 'error') return;
        await flush();
        await deps.store.invalidateRow(batch, finding.line, finding.issue);
      },
      scratchRefused(message) {
        deps.log?.('scratch_in_memory', { batch, file: name, reason: message });
      },
    });
    await flush();
    return { report, ...read };
  } catch (error) {
    if (error instanceof BatchFileError) return error;
    throw error;
  }
}

/** Why a batch needs no approval: which rows it has, none of them to send. */
export function nothingToSend(counts: { refused: number; invalid: number }): string {
  const parts = [
    ...(counts.refused > 0 ? [`${counts.refused} with an external_id an earlier batch used`] : []),
    ...(counts.invalid > 0 ? [`${counts.invalid} invalid`] : []),
  ];
  return `nothing to send (${parts.join(', ') || 'no rows'}): no approval is needed`;
}

/**
 * Takes one file in once it is complete, looking again as long as `until`
 * allows (a file complete by stability alone is taken at the second look).
 */
export async function takeWhenComplete(path: string, deps: IntakeDeps, wait: (ms: number) => Promise<void>, until: number): Promise<IntakeOutcome> {
  let before: Seen | undefined;
  for (;;) {
    const outcome = await takeFile(path, deps, before);
    if (outcome.kind !== 'waiting' || deps.clock.now() + outcome.retryInMs > until) return outcome;
    before = outcome.seen;
    await wait(outcome.retryInMs);
  }
}

/**
 * How long after it is taken a file is looked at again, before anything of it is sent: every file is, so that a
 * writer that only paused, or wrote a marker too soon, shows itself. Taken by stability alone: as long again
 * [intake.stable_ms]. Taken by its marker or manifest (its writer said it is whole): a shorter while, at most
 * MARKED_SECOND_LOOK_MS, so that a marked file is not held a full interval.
 */
export const MARKED_SECOND_LOOK_MS = 2_000;

function secondLookAfterMs(marked: boolean, deps: Pick<IntakeDeps, 'stableMs' | 'intake'>): number {
  const stableMs = deps.stableMs ?? deps.intake.stable_ms;
  return marked ? Math.min(stableMs, MARKED_SECOND_LOOK_MS) : stableMs;
}

/** Whether the file's size or modification time moved since `entry` (or it is gone). */
export async function changedSince(path: string, entry: { size: number; mtimeMs: number }): Promise<boolean> {
  const now = await lstat(path).catch(() => null);
  return !now || !now.isFile() || now.size !== entry.size || Math.floor(now.mtimeMs) !== Math.floor(entry.mtimeMs);
}

/** A file still being written: its batch is rejected (nothing of it sent) and the file put back to be taken once whole. */
async function withdraw(claimed: string, name: string, batch: string, deps: IntakeDeps, why: string): Promise<IntakeOutcome> {
  const reason = `${why}: still being written; put back in the inbox to be taken once whole, nothing of it sent`;
  await deps.store.rejectBatch(batch, reason);
  await putBack(claimed, name, batch, deps.workspace);
  return { kind: 'changed', batch, name, reason };
}

/** The differences between a file and its manifest (null when there is no manifest or it matches). */
async function checkManifest(path: string, figures: { rows: number; totals: Map<string, bigint>; sha256: string }): Promise<string[] | null> {
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? null : Promise.reject(error)));
  if (text === null) return null;
  const parsed = parseManifest(text);
  if ('error' in parsed) return [`the manifest cannot be read: ${parsed.error}`];
  const differences = compareWithManifest(parsed.manifest as Manifest, figures);
  return differences.length > 0 ? differences : null;
}
