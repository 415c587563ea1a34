/**
 * The narrow, asynchronous interface the engine talks to (STYLE 3): it knows
 * nothing of SQLite, so another store (PostgreSQL) can follow without touching
 * the engine. Each method is one atomic operation of the domain.
 */
import type { Bucket } from '../api/rate-bucket.js';
import type { PayoutRequest } from '../api/payout-request.js';
import type { Issue } from '../validate/issue.js';
import type { Phase, ReasonCode } from '../payout-states.js';
import type { AuditEntry, NewAuditEntry } from '../audit/chain.js';
import type { RangeSummary } from '../audit/chain-range.js';
import type {
  AcceptOutcome, BatchCorridor, BatchProgress, BatchRecord, CommitOutcome, CorrectionLink, LedgerRow, MetricsFigures, NewBatch, NewRow, NextRead, PipelineRow,
  ReleaseSeal, ReportScope, ResultRow, RowPatch, RowRecord, RowSeen,
} from './rows.js';
import type {
  ApprovalRecord, AuditCheckpoint, AuditPageFilter, ConsoleCredential, LeaseHolder, NotificationRecord, WebhookEvent, WebhookEventCounts, WorkerRecord,
} from './records.js';
import type { Allowance, PossibleDuplicate, SameBatchTwin, Twin, TwinQuery } from './duplicate-records.js';

export type * from './rows.js';
export type * from './records.js';
export type * from './duplicate-records.js';

export interface IntakeStore {
  /** The accepted batch with this content, if any (a file taken twice is refused). */
  acceptedBatchWithContent(sha256: string): Promise<BatchRecord | undefined>;
  /**
   * The latest batch of this content received after `after` (an instant) that ended at its release: a copy of its
   * file is not taken in again (src/engine/intake-recovery.ts).
   */
  endedBatchWithContent(sha256: string, after: string): Promise<BatchRecord | undefined>;
  /** Records a new batch being taken in; returns its id, unique even for the same content taken with --force. */
  beginBatch(batch: NewBatch): Promise<string>;
  /**
   * Adds rows as they are read, in one transaction per call; with them, the recipient entry (DuplicateStore) of each
   * row stored sendable whose request names an account, so that the possible-duplicate check reads no row back.
   */
  addRows(batchId: string, rows: readonly NewRow[]): Promise<void>;
  /**
   * Every row of the batch is stored, `count` of them: before the possible-duplicate check and the acceptance query
   * them, the database's planner statistics are brought up to date when that is many (PostgreSQL: ANALYZE; SQLite,
   * whose plans here need none: nothing).
   */
  rowsStored(batchId: string, count: number): Promise<void>;
  /** A finding across rows (a duplicate external_id) made this row invalid after all: its recipient entry goes with it. */
  invalidateRow(batchId: string, line: number, error: Issue): Promise<void>;
  /**
   * An intake that failed for a reason other than its file (a full disk, a
   * worker thread that failed): the batch stays in intake (the next start
   * recovers it), and its rows stored sendable give back their external ids
   * meanwhile, so that a file dropped again is not refused for ids nothing sent.
   */
  suspendIntake(batchId: string): Promise<void>;
  /** Rejects a batch in intake: nothing of it will be sent. False when it was not in intake (another worker got there first). */
  rejectBatch(batchId: string, reason: string): Promise<boolean>;
  /**
   * Takes an accepted batch back (its file changed after intake), only if
   * nothing of it has been sent: its rows end not sent. False when a row was sent.
   */
  withdrawBatch(batchId: string, outcome: ReasonCode, reason: string): Promise<boolean>;
  /**
   * Its file was unchanged when due: its rows may now be sent. With approvals on, `seal` is when, and the MAC of that
   * (see approvals/release-seal.ts): the column alone proves nothing to the approval gate.
   */
  releaseBatch(batchId: string, seal?: ReleaseSeal): Promise<void>;
  /** Marks a batch as needing approval (at intake, before it is accepted, when approvals are on). */
  requestApproval(batchId: string, submittedBy: string, expiresAt: string): Promise<void>;
  /**
   * Accepts a batch in intake: rows whose external_id an earlier batch already
   * used are refused, the other valid rows become ready to send. Returns the
   * counts; null when the batch is no longer in intake (recovered as
   * interrupted meanwhile): nothing is accepted then. With `refuseSameContent`,
   * a batch whose file has the content (SHA-256) of a batch accepted before it
   * is not accepted either: that batch is returned, checked in the acceptance's
   * own transaction, so that of two copies taken in at once one is accepted.
   * Only where rows are stored unsendable until acceptance (PostgreSQL): on
   * SQLite a copy refused this way would leave unpaid the rows it took first.
   */
  acceptBatch(batchId: string, options?: { refuseSameContent?: boolean }): Promise<AcceptOutcome>;
  batch(id: string): Promise<BatchRecord | undefined>;
  /** Batches whose file is, or may still be, in processing/ (taken in, or being taken in). */
  batchesInProcessing(): Promise<BatchRecord[]>;
  /** Batches whose intake never finished (the process died while taking them in). */
  interruptedIntakes(): Promise<BatchRecord[]>;
  /** The rows of a batch in file order, streamed. */
  rows(batchId: string): AsyncIterable<RowRecord>;
  /** The rows of a correction batch that name an original (every such row). */
  correctionLinks(batchId: string): Promise<CorrectionLink[]>;
  /** Marks a batch as correcting `original` (the first original its rows name). */
  setCorrectsBatch(batchId: string, original: string): Promise<void>;
  /** The rows that correct the row (batch, line): its corrections, of any batch. */
  correctionsOf(batchId: string, line: number): Promise<RowRecord[]>;
  close(): Promise<void>;
}

export interface PipelineStore {
  openBatches(): Promise<BatchRecord[]>;
  /** Whether the batch's rows may be sent (its file was found unchanged once taken). */
  batchReleased(batchId: string): Promise<boolean>;
  /** Rows of a batch in some phases (and one input currency, when given), in file order, a page at a time. */
  rowsInPhases(batchId: string, phases: readonly Phase[], afterLine: number, limit: number, inputCurrency?: string): Promise<PipelineRow[]>;
  /** Rows of every open batch in some phases (what a restart must resolve). */
  allRowsInPhases(phases: readonly Phase[]): Promise<PipelineRow[]>;
  /** The row as stored now. */
  row(batchId: string, line: number): Promise<PipelineRow | undefined>;
  /**
   * Compare-and-set: applies the patch only if the row is still at `revision`
   * (nothing moved it since it was read), and bumps the revision. `seen` is
   * the row as the caller read it at that revision: a store may take what it
   * needs from it instead of reading the row again, provided the change itself
   * checks that the stored row still holds those values.
   */
  commitRow(batchId: string, line: number, revision: number, patch: RowPatch, seen?: RowSeen): Promise<CommitOutcome>;
  /** Moves a row from one of `from` to `to`; false when it was not in one of them (someone moved it first). */
  movePhase(batchId: string, line: number, from: readonly Phase[], to: Phase, outcome?: ReasonCode | null, detail?: string | null): Promise<boolean>;
  /**
   * The balance of a currency ran out: nothing more in it is created or funded
   * for the batches open now. Their rows in that currency not sent yet end as
   * not sent (insufficient_funds, with the detail). Returns how many batches were
   * stopped now (0: stopped before) and how many rows were not sent.
   */
  stopCurrency(currency: string, detail: string, at: string): Promise<{ batches: number; notSent: number }>;
  /** The batch's rows not sent yet end not sent, with this reason (a batch held for a person). Returns how many. */
  endReadyRows(batchId: string, outcome: string, detail: string): Promise<number>;

  /**
   * The corridors of the batch that still have ready rows, from the summary
   * written at acceptance (never by reading every row); for a batch accepted
   * before the summary existed, it is made once, from its rows ready then.
   */
  batchCorridors(batchId: string): Promise<BatchCorridor[]>;
  /**
   * The batch's ready rows on this corridor end not sent, with this reason
   * (the corridor is inactive at the service). Returns which, in file order.
   */
  endReadyRowsOfCorridor(batchId: string, corridor: Omit<BatchCorridor, 'rows'>, outcome: string, detail: string): Promise<{ line: number; external_id: string }[]>;
  /** Counts a read and sets when the next one is due (ms since the epoch). */
  scheduleRead(batchId: string, line: number, nextReadAt: number, counted: boolean): Promise<void>;
  dueReads(now: number, limit: number): Promise<PipelineRow[]>;
  /** Rows in flight with no read scheduled (a crash came between two steps): due at `now`. Returns how many. */
  scheduleOrphans(now: number): Promise<number>;
  /** Rows followed whose last news is from before `heardBefore` (ISO 8601): their next read is brought forward to `now`. */
  catchUpReads(heardBefore: string, now: number): Promise<number>;
  /** The unsettled rows of a batch, soonest read first. */
  nextReads(batchId: string, limit: number): Promise<NextRead[]>;
  unsettledRows(batchId: string): Promise<number>;
  settleBatch(batchId: string, at: string): Promise<void>;
  /** Every row of a batch in file order, as the result file shows it (after a line: a keyset page). */
  resultRows(batchId: string, afterLine?: number): AsyncIterable<ResultRow>;
  /** The row that created this transaction, in any batch. */
  rowByTransaction(transactionId: string): Promise<PipelineRow | undefined>;
  /** The row that was or will be sent with this external_id (at most one, by the unique index). */
  rowBySubmittedExternalId(externalId: string): Promise<PipelineRow | undefined>;
  /** How far a batch has got, for progress bars and status. */
  progress(batchId: string): Promise<BatchProgress>;
  /** Open batches, and the others received since `since` (ISO 8601), newest first. */
  recentBatches(since: string): Promise<BatchRecord[]>;
  /** Rows of open batches created and waiting for this sender's approval [3.3]. */
  rowsWaitingOnSender(senderExternalId: string): Promise<PipelineRow[]>;
  /** The engine says it is alive (ms since the epoch), so that the next start knows how long it was down. */
  recordHeartbeat(name: string, at: number): Promise<void>;
  lastHeartbeat(name: string): Promise<number | null>;
}

export interface MetricsStore {
  metricsFigures(recentSince: string): Promise<MetricsFigures>;
}

export interface ReportStore {
  /**
   * The rows that matter to a reconciliation, in batch and line order: every row
   * of the batch; or, for a period, the rows funded before its end and not paid
   * out or refunded before its start, and the rows refused (quote, balance) in it.
   */
  ledgerRows(scope: ReportScope): Promise<LedgerRow[]>;
  /** The same rows in pages of at most `limit`, after a (batch, line) in that order: a report read by keyset. */
  ledgerRowPage(scope: ReportScope, after: { batch: string; line: number } | null, limit: number): Promise<LedgerRow[]>;
  /** Whether any row of any batch created this transaction. */
  knowsTransaction(transactionId: string): Promise<boolean>;
}

export interface WebhookStore {
  /** Keeps a verified delivery durably; 'replayed' when its nonce was accepted before (nothing is kept then). */
  recordWebhookEvent(event: Omit<WebhookEvent, 'id'>): Promise<number | 'replayed'>;
  /** Events received but not applied yet (the process stopped in between), oldest first. */
  unappliedWebhookEvents(limit: number): Promise<WebhookEvent[]>;
  recordWebhookOutcome(eventId: number, outcome: string, at: string): Promise<void>;
  webhookEventCounts(): Promise<WebhookEventCounts>;
}

export interface ScheduleStore {
  /** When the schedule last ran (ms since the epoch), or null if it never ran. */
  lastScheduleRun(name: string): Promise<number | null>;
  /**
   * Records a run at `at` only if the last run is still `expected` (null: never
   * ran): of several workers finding a schedule due, one runs it. False when
   * another recorded a run first.
   */
  claimScheduleRun(name: string, expected: number | null, at: number): Promise<boolean>;
}

export interface LeaseStore {
  /**
   * Takes the workspace for `me`, atomically: refused (the holder returned) while
   * another holder is alive; taken over when it is not (its process gone on this
   * host, or its lease not renewed for `staleAfterMs`).
   */
  acquireLease(me: LeaseHolder, isAlive: (holder: LeaseHolder) => boolean, staleAfterMs: number): Promise<LeaseHolder | null>;
  /** Renews the lease; false when it is no longer ours (taken over, or the database replaced). */
  renewLease(token: string, at: number): Promise<boolean>;
  releaseLease(token: string): Promise<void>;
}

export interface ApprovalStore {
  recordApproval(record: Omit<ApprovalRecord, 'id'>): Promise<void>;
  approvalsOf(batchId: string): Promise<ApprovalRecord[]>;
  /** The audit entries recording the batch's approvals and rejections ('approved', 'rejected'), in order: what the gate checks the approvals table against. */
  decisionEntries(batchId: string): Promise<AuditEntry[]>;
  /** Where the batch's approval stands, and why, for people (the truth is the verified approvals). */
  setApprovalState(batchId: string, state: string, reason: string | null): Promise<void>;
  /** The rows accepted to be sent, in file order, as they will be sent: what an approver signs for. */
  acceptedRows(batchId: string): AsyncIterable<{ line: number; request: PayoutRequest }>;
  /** This database's random identity, made at its first start: what an approval is for (a copy elsewhere does not verify). */
  deploymentId(): Promise<string>;
}

export interface AuditStore {
  appendAudit(entry: NewAuditEntry): Promise<void>;
  /** The trail in order, a page at a time. */
  auditEntries(afterSeq: number, limit: number): Promise<AuditEntry[]>;
  /**
   * The trail's last entry, what reports and summaries print; leaving out
   * entries of `except` (a report's own entry, so that writing it again gives
   * the same file).
   */
  auditHead(except?: string): Promise<{ seq: number; hash: string }>;
  /** The last entry of an action (e.g. the configuration last recorded). */
  lastAudit(action: string): Promise<AuditEntry | undefined>;
  /** The newest `limit` entries of a filter, by keyset (older than `before`). */
  auditPage(filter: AuditPageFilter, limit: number): Promise<AuditEntry[]>;
  auditEntryAt(seq: number): Promise<AuditEntry | undefined>;
  /**
   * The trail through `throughSeq` checked range by range, several at once (audit/chain-range.ts), where the
   * database allows it (SQLite, on threads with connections of their own); absent where it does not, and the
   * trail is then walked page by page.
   */
  checkAuditRanges?(throughSeq: number): Promise<RangeSummary[]>;
  /** The entries of reconciliation reports written, in order. */
  reconciliationEntries(): Promise<AuditEntry[]>;
  /** How far the chain was verified intact, and its entries counted by action and batch up to there. */
  auditCheckpoint(): Promise<AuditCheckpoint>;
  /** Compare-and-set: moves the checkpoint only if it still stands at `fromSeq`. */
  moveAuditCheckpoint(fromSeq: number, next: AuditCheckpoint): Promise<boolean>;
  /** A settled batch's summary kept for the console, and what it was made from. */
  keptBatchSummary(batchId: string): Promise<{ basis: string; summary: string } | undefined>;
  keepBatchSummary(batchId: string, basis: string, summary: string): Promise<void>;
}


export interface ConsoleStore {
  addConsoleCredential(credential: Omit<ConsoleCredential, 'used_at'>): Promise<void>;
  /** The credential if it exists and has not expired at `now` (nor been used, for a code). */
  consoleCredential(hash: string, now: number): Promise<ConsoleCredential | undefined>;
  /** Uses a one-time code: true once; false when it was used, expired or unknown. */
  useConsoleCode(hash: string, now: number): Promise<boolean>;
  deleteConsoleCredential(hash: string): Promise<void>;
}

export interface NotificationStore {
  /** Queues a notification; false when one with that channel and key was queued before. */
  enqueueNotification(n: Pick<NotificationRecord, 'channel' | 'event' | 'dedupe_key' | 'payload' | 'created_at'>): Promise<boolean>;
  /** Notifications due at `now`, each claimed by moving its next attempt to `claimUntil`: of several workers, one sends it. */
  claimDueNotifications(now: number, claimUntil: number, limit: number): Promise<NotificationRecord[]>;
  markNotificationDelivered(id: number, at: number): Promise<void>;
  /** A failed attempt: tried again at `nextAttemptAt`, or given up (null). */
  markNotificationFailed(id: number, error: string, nextAttemptAt: number | null, at: number): Promise<void>;
  /** Counts per channel: waiting, delivered, given up. */
  notificationCounts(): Promise<Record<string, { waiting: number; delivered: number; given_up: number }>>;
}

/**
 * The recipient account of each sendable row is kept as the row is stored (addRows; invalidateRow forgets a row's),
 * for later rows to be checked against.
 */
export interface DuplicateStore {
  /**
   * Writes a batch's recipient entries where twins are looked for (by payment), once its rows are all stored and
   * before it is screened: in that order, not row by row as they were stored. Until then none of its rows is anyone's
   * twin. Writing them again changes nothing more.
   */
  indexRecipients(batchId: string): Promise<void>;
  /** The last line of a batch with a recipient entry; 0 when none has one. */
  lastRecipientLine(batchId: string): Promise<number>;
  /** These lines of a batch (ascending, each once): their external ids and phases, in line order (the rows found with a twin). */
  rowsAtLines(batchId: string, lines: readonly number[]): Promise<{ line: number; external_id: string | null; phase: Phase }[]>;
  /**
   * Candidate twins: rows of other batches paying the same account the same amount in the same currency, not ended
   * unpaid, dated (created, or else received) at or after `since`; newest first. (Twins within one file are found by
   * the engine as it reads the file's rows: engine/duplicate-screen.ts SameFileTwins.)
   */
  twinsOf(query: TwinQuery, since: string, limit: number): Promise<Twin[]>;
  /** The same for a batch's rows of lines (after, upto] whose accounts are recorded, in one query: each twin with the line it is a twin of. */
  batchTwins(batchId: string, after: number, upto: number, since: string): Promise<(Twin & { of_line: number })[]>;
  /**
   * Within a batch: for its rows of lines (after, upto] whose accounts are recorded, the first earlier line of the same
   * batch recorded paying the same account, amount and currency (a same-file twin), with its external_id. From the
   * index, so that a file of a million rows is looked at in constant memory.
   */
  sameBatchTwins(batchId: string, after: number, upto: number): Promise<SameBatchTwin[]>;
  /** Records what was found, and holds each `hold` row still ready: moved to duplicate_hold with the reason, in one transaction. */
  recordPossibleDuplicates(found: readonly Omit<PossibleDuplicate, 'allowed_by' | 'allowed_reason' | 'allowed_at'>[]): Promise<void>;
  /** What was found in a batch, in line order. */
  possibleDuplicates(batchId: string): Promise<PossibleDuplicate[]>;
  /** Every row held as a possible duplicate now, of any batch (the console's list). */
  heldDuplicates(limit: number): Promise<PossibleDuplicate[]>;
  /**
   * A person allows a held row: compare-and-set from duplicate_hold to ready, the allowance kept and written to
   * the audit trail in the same transaction. False when the row was not held (allowed or cancelled meanwhile).
   */
  allowDuplicate(batchId: string, line: number, allowance: Allowance): Promise<boolean>;
  /**
   * The batch ends without them (rejected, withdrawn, its approval ended): its rows held as possible duplicates
   * end not sent, with this reason, so that their external ids are free again. Returns how many.
   */
  endHeldDuplicates(batchId: string, outcome: string | null, detail: string | null): Promise<number>;
}

/** Every port at once: what a database behind paybatch implements (SQLite, PostgreSQL). */
export type Store = IntakeStore & PipelineStore & ReportStore & WebhookStore & ScheduleStore & LeaseStore & ApprovalStore & AuditStore & ConsoleStore & NotificationStore & MetricsStore & DuplicateStore;

/**
 * What only a database shared by several workers does (PostgreSQL). A worker
 * holds a lease, renewed while it lives; rows, call slots and interrupted
 * intakes are claimed under it. Whatever a dead worker held (its lease expired)
 * goes to the others; a worker restarted under the same name holds nothing of
 * its earlier life. Claims are taken with SKIP LOCKED: workers never wait on
 * each other's rows.
 */
export interface SharedWorkStore {
  /** Joins as `me`: refused (the live worker returned) while a worker of that name lives (lease not expired, process alive). */
  joinWorkers(me: WorkerRecord, isAlive: (worker: WorkerRecord) => boolean): Promise<WorkerRecord | null>;
  /** Renews the lease; false when it is no longer this process's (another took the name over). */
  renewWorker(name: string, token: string, at: number, expiresAt: number): Promise<boolean>;
  /** Leaves: the lease ends now, and its claims and slots are freed. */
  leaveWorkers(name: string, token: string): Promise<void>;
  /** Every worker that ever joined, with its lease. */
  workers(): Promise<WorkerRecord[]>;
  /** Claims one row for `worker`: the row as it stands under the claim, read in the same statement; null while another live worker holds it. */
  claimRow(batchId: string, line: number, worker: string, now: number): Promise<PipelineRow | null>;
  releaseRow(batchId: string, line: number, worker: string): Promise<void>;
  /**
   * Claims up to `limit` ready rows of a batch that no live worker holds (nor
   * `worker` itself: those it is sending already), in file order; a dead
   * worker's come back this way.
   */
  claimReadyRows(batchId: string, worker: string, now: number, limit: number): Promise<PipelineRow[]>;
  /** Claims up to `limit` rows whose read is due that no live worker holds, soonest first. */
  claimDueReads(worker: string, now: number, limit: number): Promise<PipelineRow[]>;
  /** Claims up to `limit` webhook events not applied yet that no live worker holds, oldest first: each is applied by one worker. */
  claimWebhookEvents(worker: string, now: number, limit: number): Promise<WebhookEvent[]>;
  /** Takes one of the first `slots` call slots (the service's concurrency, shared by all workers); null when all are taken. */
  takeCallSlot(worker: string, slots: number, now: number): Promise<number | null>;
  /** Frees the slot if it is still the take `takenAt` marked (takeCallSlot's `now`): a late return never frees a later take. */
  returnCallSlot(slot: number, worker: string, takenAt: number): Promise<void>;
  /**
   * service.rate_limits, shared by every worker: reserves a token of each bucket; returns the time they are the
   * caller's, never before `now` (queries/rate-buckets.ts).
   */
  reserveRateTokens(buckets: readonly Bucket[], now: number): Promise<number>;
  /**
   * Frees what `worker` holds but is not using (a release that failed): its
   * claims of rows not in `working` ("batch:line") and call slots not in
   * `slots`, taken before `before`. Returns how many.
   */
  sweepOwnClaims(worker: string, before: number, working: readonly string[], slots: readonly number[]): Promise<{ rows: number; slots: number }>;
  /** What a worker holds now, for /healthz. */
  heldBy(worker: string): Promise<{ rows: number; slots: number }>;
  /** Keeps a taken file's bytes, a piece at a time: any worker can carry the batch, or take the file again. */
  addFileChunk(batchId: string, seq: number, bytes: Buffer): Promise<void>;
  fileChunks(batchId: string): AsyncIterable<Buffer>;
  /** Keeps the manifest that came with a taken file (its text), so that the file taken again elsewhere has it too. */
  keepManifest(batchId: string, text: string): Promise<void>;
  keptManifest(batchId: string): Promise<string | null>;
  /**
   * Intakes left unfinished by a worker that is dead now; with `ownToo`, also
   * those of `worker` itself (at its start: they are of an earlier life).
   */
  orphanedIntakes(worker: string, now: number, ownToo: boolean): Promise<BatchRecord[]>;
}
