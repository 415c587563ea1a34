/**
 * The narrow, asynchronous interface the engine talks to (STYLE 3): it knows
 * nothing of SQLite, so another store (PostgreSQL) can follow without touching
 * the engine. Each method is one atomic operation of the domain.
 */
import type { PayoutRequest } from '../api/payout-request.js';
import type { StoredRequest } from '../batch/payout-request.js';
import type { Issue } from '../validate/issue.js';
import type { ResultRow } from '../reports/results.js';
import type { RowFields } from '../validate/fields.js';
import type { LedgerRow } from '../reports/reconciliation.js';
import type { AuditEntry, NewAuditEntry } from '../audit/chain.js';

export type BatchStatus = 'intake' | 'accepted' | 'rejected' | 'settled';
export type IntakePolicy = 'reject_file' | 'skip_invalid';

export interface BatchRecord {
  id: string;
  file_name: string;
  sha256: string;
  size_bytes: number;
  status: BatchStatus;
  policy: IntakePolicy;
  rows_total: number;
  rows_valid: number;
  reason: string | null;
  received_at: string;
  settled_at: string | null;
  /** The claimed file's modification time (ms), to see a change after intake. */
  file_mtime_ms: number | null;
  /** Nothing is sent before this time (ms since the epoch). */
  send_after: number;
  /** 1 once its file was found unchanged at send_after: only then are its rows sent. */
  released: number;
  /** With approvals on: when it was released, and the MAC of that (see approvals/release-seal.ts). */
  released_at?: string | null;
  release_seal?: string | null;
  /** A corrections batch: the batch whose rows it pays again (the first its rows name). */
  corrects_batch?: string | null;
  /** The worker that took its file in (several workers on one database); null otherwise. */
  taken_by?: string | null;
  /** Who submitted it (the inbox's submitter), when approvals are on. */
  submitted_by: string | null;
  /** null (not needed), awaiting, approved, rejected, expired, held. */
  approval: string | null;
  approval_expires_at: string | null;
  approval_reason: string | null;
  /** State changes learned by webhook, by polling, and in answers to paybatch's own calls. */
  changes_by_webhook: number;
  changes_by_polling: number;
  changes_by_answer: number;
}

/** A batch as its intake begins: `taken_by` is kept where several workers share the database. */
export type NewBatch = Pick<BatchRecord, 'file_name' | 'sha256' | 'size_bytes' | 'policy' | 'received_at' | 'file_mtime_ms' | 'send_after'> & { taken_by?: string | null };

export interface NewRow {
  line: number;
  external_id: string | null;
  /** The request body of a valid row; null for an invalid one (or when `stored` carries it). */
  request: PayoutRequest | null;
  /** The request as stored, made where the row was checked (a worker thread): taken instead of `request`. */
  stored?: StoredRequest | null;
  errors: Issue[];
  /** A correction: the row it pays again. */
  original?: { batch: string; line: number } | null;
  /** An invalid row's values as read, kept for its corrections file. */
  fields?: RowFields | null;
}

export interface RowRecord {
  batch_id: string;
  line: number;
  external_id: string | null;
  phase: string;
  outcome: string | null;
  errors: Issue[];
  request: PayoutRequest | null;
  outcome_detail: string | null;
  state: string | null;
  state_reason: string | null;
  state_reason_code: string | null;
  /** An invalid row's values as read; null for a valid row. */
  fields: RowFields | null;
  original_batch: string | null;
  original_line: number | null;
}

/** A row of a correction batch and the original it names. */
export interface CorrectionLink {
  line: number;
  external_id: string | null;
  original_batch: string;
  original_line: number;
}

export interface IntakeStore {
  /** The accepted batch with this content, if any (a file taken twice is refused). */
  acceptedBatchWithContent(sha256: string): Promise<BatchRecord | undefined>;
  /** Records a new batch being taken in; returns its id, unique even for the same content taken with --force. */
  beginBatch(batch: NewBatch): Promise<string>;
  /** Adds rows as they are read, in one transaction per call. */
  addRows(batchId: string, rows: readonly NewRow[]): Promise<void>;
  /** A finding across rows (a duplicate external_id) made this row invalid after all. */
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
  withdrawBatch(batchId: string, outcome: string, reason: string): Promise<boolean>;
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
   * interrupted meanwhile): nothing is accepted then.
   */
  acceptBatch(batchId: string): Promise<{ ready: number; refused: number; invalid: number } | null>;
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

/** How paybatch learned of a state: a webhook, a read of its own (polling), or the answer to a create or fund. */
export type ObservationSource = 'webhook' | 'polling' | 'answer';

/** What the service said about a transaction at one moment [2.5]. */
export interface Observation {
  source: ObservationSource;
  transaction_id: string;
  state: string;
  state_reason: string | null;
  state_reason_code: string | null;
  input_amount: string | null;
  input_currency: string | null;
  output_amount: string | null;
  output_currency: string | null;
  /** Refunded to the balance, when the service says; a refund without it is taken as the whole input amount. */
  refunded_amount: string | null;
  /** The service's updated_at, to keep only newer observations; null when it gave none. */
  updated_at: string | null;
}

/** A row as the pipeline decides on it: what was asked, where paybatch has got, and what the service last said. */
export interface PipelineRow {
  batch_id: string;
  line: number;
  external_id: string;
  request: PayoutRequest;
  phase: string;
  /** paybatch's reason code for how the row ended, when paybatch ended it (REASONS in engine/states). */
  outcome: string | null;
  /** The reason in words: which limit, and both amounts. */
  outcome_detail: string | null;
  transaction_id: string | null;
  state: string | null;
  state_reason: string | null;
  state_reason_code: string | null;
  input_amount: string | null;
  input_currency: string | null;
  output_amount: string | null;
  output_currency: string | null;
  refunded_amount: string | null;
  created_at: string | null;
  /** When paybatch recorded the funding; null while unfunded. */
  funded_at: string | null;
  paid_at: string | null;
  refunded_at: string | null;
  settled_at: string | null;
  /** The service's updated_at of the newest observation kept. */
  observed_at: string | null;
  /** When paybatch last heard of the transaction (its own clock): for the catch-up after downtime. */
  heard_at: string | null;
  reads: number;
  next_read_at: number | null;
  fund_attempts: number;
  /** Bumped by every committed change: a decision is applied only if the row has not moved since it was read. */
  revision: number;
  /** A correction: the row it pays again (see engine/corrections.ts). */
  original_batch?: string | null;
  original_line?: number | null;
}

/** What a commit needs to know of the row as it stands: the columns its indexes depend on (but the next read's time), and its state. */
export type RowSeen = Pick<PipelineRow, 'phase' | 'state' | 'transaction_id' | 'funded_at'>;

/** The columns of a row a decision may change. */
export type RowChanges = Partial<Pick<PipelineRow,
  | 'phase' | 'outcome' | 'outcome_detail' | 'transaction_id' | 'state' | 'state_reason' | 'state_reason_code'
  | 'input_amount' | 'input_currency' | 'output_amount' | 'output_currency' | 'refunded_amount'
  | 'created_at' | 'funded_at' | 'paid_at' | 'refunded_at' | 'settled_at' | 'observed_at' | 'heard_at'
  | 'next_read_at' | 'fund_attempts'>> & {
  /** Replaces the row's errors (paybatch's reasons, the service's refusal, the fields that did not match). */
  errors?: Issue[];
};

export interface RowPatch {
  changes: RowChanges;
  /** The state changed, learned this way: counted per batch. */
  learned?: ObservationSource;
  /** Count a read against the polling budget [D17]. */
  countRead?: boolean;
  /**
   * Moving to funding reserves the row's input amount within the batch's budget,
   * atomically with the move: refused when the currency's balance ran out or the
   * budget would be exceeded.
   */
  reserve?: { currency: string; amount: bigint; budget: bigint | null };
  /** Written to the audit trail in the same transaction, about this row. */
  audits?: RowAudit[];
}

/**
 * What became of a commit: applied; or not, because the row moved since it was
 * read, the reservation was refused, or the transaction id belongs to another row.
 */
export type CommitOutcome =
  | { kind: 'applied' }
  | { kind: 'moved' }
  | { kind: 'over_budget'; committed: bigint }
  | { kind: 'stopped'; detail: string }
  | { kind: 'taken'; batch_id: string; line: number };

export interface BatchProgress {
  /** Rows to send (valid, accepted). */
  sendable: number;
  created: number;
  funded: number;
  /** Sendable rows whose part is over: final, held, or ended without being sent. */
  settled: number;
  /** Rows not final yet (as unsettledRows counts them). */
  unsettled: number;
  /** When the oldest row not final yet was created (or its batch received), if any. */
  oldest_unsettled_at: string | null;
}

/** When an unsettled row will next be read. */
export interface NextRead {
  line: number;
  external_id: string;
  phase: string;
  state: string | null;
  /** ms since the epoch; null when no read is scheduled (the row is being sent, created or funded). */
  next_read_at: number | null;
}

/** A corridor a batch's rows use (recipient's country, payout type, both currencies), as batch_corridors keeps it. */
export interface BatchCorridor {
  country_code: string;
  type: string;
  input_currency: string;
  output_currency: string;
  /** How many of the batch's rows were made ready on it at acceptance (for a batch accepted before the summary existed: ready when it was made). */
  rows: number;
}

export interface PipelineStore {
  openBatches(): Promise<BatchRecord[]>;
  /** Whether the batch's rows may be sent (its file was found unchanged once taken). */
  batchReleased(batchId: string): Promise<boolean>;
  /** Rows of a batch in some phases (and one input currency, when given), in file order, a page at a time. */
  rowsInPhases(batchId: string, phases: readonly string[], afterLine: number, limit: number, inputCurrency?: string): Promise<PipelineRow[]>;
  /** Rows of every open batch in some phases (what a restart must resolve). */
  allRowsInPhases(phases: readonly string[]): Promise<PipelineRow[]>;
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
  movePhase(batchId: string, line: number, from: readonly string[], to: string, outcome?: string | null, detail?: string | null): Promise<boolean>;
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
  /** Every row of a batch in file order, as the result file shows it. */
  resultRows(batchId: string): AsyncIterable<ResultRow>;
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

/**
 * What /metrics shows of the store at a scrape, in one cheap read. Open batches
 * are those in intake or accepted (not settled, rejected or withdrawn).
 */
export interface MetricsFigures {
  /** Rows of open batches, by phase. */
  rows_by_phase: Record<string, number>;
  /** Rows of open batches in phase final, by the service's state (or paybatch's outcome when it ended the row without one). */
  final_by_state: Record<string, number>;
  /** Open batches waiting for approval, and when the oldest was received (ISO 8601). */
  awaiting_approval: number;
  oldest_awaiting_at: string | null;
  /**
   * Rows a person should look at: in an attention state (manual, error, stuck,
   * exception) or held (an answer that did not match), of open batches and of
   * those received since `recentSince`; and the oldest one's last observed change.
   */
  attention: number;
  oldest_attention_at: string | null;
}

export interface MetricsStore {
  metricsFigures(recentSince: string): Promise<MetricsFigures>;
}

/** Which rows a reconciliation looks at: one batch, or a period [from, to) (ISO 8601). */
export type ReportScope = { batch: string } | { from: string; to: string };

export interface ReportStore {
  /**
   * The rows that matter to a reconciliation, in batch and line order: every row
   * of the batch; or, for a period, the rows funded before its end and not paid
   * out or refunded before its start, and the rows refused (quote, balance) in it.
   */
  ledgerRows(scope: ReportScope): Promise<LedgerRow[]>;
  /** Whether any row of any batch created this transaction. */
  knowsTransaction(transactionId: string): Promise<boolean>;
}

/** A verified webhook delivery [6], [D14]. */
export interface WebhookEvent {
  id: number;
  received_at: string;
  nonce: string;
  webhook_id: string | null;
  event_type: string;
  object_id: string | null;
  body: string;
}

export interface WebhookEventCounts {
  received: number;
  pending: number;
  /** Outcome to how many events ended with it. */
  outcomes: Record<string, number>;
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

/** Who holds the workspace: one `run` or `watch` at a time. */
export interface LeaseHolder {
  token: string;
  holder: string;
  pid: number;
  host: string;
  acquired_at: number;
  renewed_at: number;
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

/** An approval or a rejection as kept: the statement and signature are verified by the engine, never trusted. */
export interface ApprovalRecord {
  id: number;
  batch_id: string;
  person: string;
  decision: 'approve' | 'reject';
  statement: string | null;
  signature: string | null;
  reason: string | null;
  at: string;
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

/** When a batch was released (ISO 8601), and the MAC over it that only this deployment's service secret makes. */
export interface ReleaseSeal {
  at: string;
  seal: string;
}

/** An audit entry about a row, written with the change it records. */
export interface RowAudit {
  action: string;
  at: string;
  actor?: string;
  details: Record<string, unknown>;
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
}

/** A console sign-in code or session, kept as the SHA-256 of its secret. */
export interface ConsoleCredential {
  hash: string;
  kind: 'code' | 'session';
  person: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface ConsoleStore {
  addConsoleCredential(credential: Omit<ConsoleCredential, 'used_at'>): Promise<void>;
  /** The credential if it exists and has not expired at `now` (nor been used, for a code). */
  consoleCredential(hash: string, now: number): Promise<ConsoleCredential | undefined>;
  /** Uses a one-time code: true once; false when it was used, expired or unknown. */
  useConsoleCode(hash: string, now: number): Promise<boolean>;
  deleteConsoleCredential(hash: string): Promise<void>;
}

/** A notification waiting to be, or delivered on one channel. */
export interface NotificationRecord {
  id: number;
  channel: string;
  event: string;
  /** One notification per channel and key (a batch settled is told once, whichever worker saw it). */
  dedupe_key: string;
  /** JSON */
  payload: string;
  created_at: number;
  attempts: number;
  next_attempt_at: number;
  delivered_at: number | null;
  given_up_at: number | null;
  last_error: string | null;
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

/** An earlier row paying the same account the same amount in the same currency (see engine/duplicates.ts). */
export interface Twin {
  batch_id: string;
  line: number;
  external_id: string | null;
  phase: string;
  /** The service's state of its transaction; null before it has one. */
  state: string | null;
  /** When it was created at the service, or else when its batch was received (ISO 8601). */
  at: string;
}

/** A person's word that a possible duplicate is meant (paybatch allow). */
export interface Allowance {
  person: string;
  reason: string;
  at: string;
}

/** A row's recipient account (validate/recipient-key.ts), amount and currency: what a possible duplicate is found by. */
export interface RecipientEntry {
  line: number;
  key: string;
  currency: string;
  /** Minor units, an integer string. */
  amount: string;
}

/** A row looked for twins; `batch_id` '' for a file not taken in yet. */
export interface TwinQuery extends RecipientEntry {
  batch_id: string;
}

/** A row found a possible duplicate, with its twin as it stood then; who allowed it, once a person did. */
export interface PossibleDuplicate {
  batch_id: string;
  line: number;
  external_id: string | null;
  twin: Twin;
  /** hold or warn (engine/duplicates.ts). */
  action: string;
  detail: string;
  allowed_by: string | null;
  allowed_reason: string | null;
  allowed_at: string | null;
}

export interface DuplicateStore {
  /** Keeps the recipient account of a batch's sendable rows, for later rows to be checked against. */
  recordRecipients(batchId: string, entries: readonly RecipientEntry[]): Promise<void>;
  /**
   * Candidate twins: rows of other batches paying the same account the same amount in the same currency, not ended
   * unpaid, dated (created, or else received) at or after `since`; newest first. (Within one file, the same payment
   * twice is the validation's repeated_payout warning.)
   */
  twinsOf(query: TwinQuery, since: string, limit: number): Promise<Twin[]>;
  /** The same for a batch's rows of lines (after, upto] whose accounts are recorded, in one query: each twin with the line it is a twin of. */
  batchTwins(batchId: string, after: number, upto: number, since: string): Promise<(Twin & { of_line: number })[]>;
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

/** A worker among several sharing one database, as its lease records it. */
export interface WorkerRecord {
  name: string;
  /** This process's own token: a second process under the same name is told apart. */
  token: string;
  host: string;
  pid: number;
  started_at: number;
  renewed_at: number;
  /** ms since the epoch: past it, the worker is taken for dead and what it held goes to the others. */
  expires_at: number;
}

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
  /** Claims one row for `worker`; false while another live worker holds it. */
  claimRow(batchId: string, line: number, worker: string, now: number): Promise<boolean>;
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
  returnCallSlot(slot: number, worker: string): Promise<void>;
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
