/**
 * The PostgreSQL store: every port of port.ts, to the same contract as
 * SQLite's (test/store/contract.ts), for several workers sharing one database;
 * composed of query modules that take the connection: those the two databases
 * share (queries/) and PostgreSQL's own (this folder). It holds no query and
 * no rule of its own; it extends nothing.
 */
import pg from 'pg';
import type { AuditEntry, NewAuditEntry } from '../../audit/chain.js';
import type { PayoutRequest } from '../../api/payout-request.js';
import { DatabaseUnreachable, DatabaseUnusable } from '../../errors.js';
import type { Issue } from '../../validate/issue.js';
import { redactUrl } from '../database-url.js';
import type {
  ApprovalRecord, BatchCorridor, BatchProgress, BatchRecord, CommitOutcome, ConsoleCredential, CorrectionLink, LeaseHolder, LedgerRow, MetricsFigures,
  NewBatch, NewRow, NextRead, NotificationRecord, PipelineRow, ReleaseSeal, ReportScope, ResultRow, RowPatch, RowRecord, SharedWorkStore, Store, WebhookEvent,
  WebhookEventCounts, WorkerRecord,
} from '../port.js';
import * as audit from '../queries/audit.js';
import * as coordination from '../queries/coordination.js';
import * as intake from '../queries/intake.js';
import * as outbox from '../queries/outbox.js';
import * as pipeline from '../queries/pipeline.js';
import * as reports from '../queries/reports.js';
import * as pgAudit from './audit.js';
import { PgConnection } from './client.js';
import { commitRow } from './commit.js';
import { connectionLost, lostDetail } from './connection.js';
import * as pgCoordination from './coordination.js';
import * as pgIntake from './intake.js';
import { migratePg } from './migrate.js';
import { PG_MIGRATIONS } from './migrations.js';
import * as pgOutbox from './outbox.js';
import * as pgPipeline from './pipeline.js';
import * as shared from './shared-work.js';

type Counts = { ready: number; refused: number; invalid: number };
type Ended = { line: number; external_id: string }[];
type ChannelCounts = Record<string, { waiting: number; delivered: number; given_up: number }>;
type Held = { rows: number; slots: number };

export class PostgresStore implements Store, SharedWorkStore {
  private readonly c: PgConnection;
  private readonly slotsMade: shared.CallSlotsMade = { slots: 0 };

  private constructor(pool: pg.Pool) {
    this.c = new PgConnection(pool, pool);
  }

  /** Connects (a pool of `max` connections) and applies the migrations not applied yet. */
  static async open(url: string, options: { max?: number } = {}): Promise<PostgresStore> {
    // Bounded waits: a statement, a lock or a transaction left open by a stalled worker never holds the others for long.
    const pool = new pg.Pool({
      connectionString: url, max: options.max ?? 10, connectionTimeoutMillis: 10_000,
      statement_timeout: 120_000, lock_timeout: 30_000, idle_in_transaction_session_timeout: 60_000,
    });
    // An idle connection that fails (the server restarted) must not bring the process down: the next query reconnects.
    // One taken from the pool is listened to while it is out (connection.ts).
    pool.on('error', () => {});
    try {
      await migratePg(pool, PG_MIGRATIONS);
    } catch (error) {
      await pool.end().catch(() => {});
      if (error instanceof DatabaseUnusable) throw error;
      // Down or out of reach is not a database this paybatch cannot use: run again once it answers (exit 75).
      if (connectionLost(error)) {
        throw new DatabaseUnreachable(`PostgreSQL at ${redactUrl(url)} cannot be reached (${lostDetail(error)}): nothing was changed; run again once it answers`, { cause: error });
      }
      throw new DatabaseUnusable(`PostgreSQL at ${redactUrl(url)} cannot be used: ${(error as Error).message}`);
    }
    return new PostgresStore(pool);
  }

  close(): Promise<void> { return this.c.close(); }

  // ---- intake
  acceptedBatchWithContent(sha256: string): Promise<BatchRecord | undefined> { return intake.acceptedBatchWithContent(this.c, sha256); }
  beginBatch(batch: NewBatch): Promise<string> { return pgIntake.beginBatch(this.c, batch); }
  addRows(batchId: string, rows: readonly NewRow[]): Promise<void> { return pgIntake.addRows(this.c, batchId, rows); }
  invalidateRow(batchId: string, line: number, error: Issue): Promise<void> { return pgIntake.invalidateRow(this.c, batchId, line, error); }
  /** Rows are made ready only by the acceptance here, in the transaction that ends the intake: none to give back. */
  async suspendIntake(_batchId: string): Promise<void> {}
  rejectBatch(batchId: string, reason: string): Promise<boolean> { return pgIntake.rejectBatch(this.c, batchId, reason); }
  withdrawBatch(batchId: string, outcome: string, reason: string): Promise<boolean> { return pgIntake.withdrawBatch(this.c, batchId, outcome, reason); }
  releaseBatch(batchId: string, seal?: ReleaseSeal): Promise<void> { return intake.releaseBatch(this.c, batchId, seal); }
  requestApproval(batchId: string, submittedBy: string, expiresAt: string): Promise<void> { return intake.requestApproval(this.c, batchId, submittedBy, expiresAt); }
  acceptBatch(batchId: string): Promise<Counts | null> { return pgIntake.acceptBatch(this.c, batchId); }
  batch(id: string): Promise<BatchRecord | undefined> { return intake.batch(this.c, id); }
  batchesInProcessing(): Promise<BatchRecord[]> { return intake.batchesInProcessing(this.c); }
  interruptedIntakes(): Promise<BatchRecord[]> { return intake.interruptedIntakes(this.c); }
  rows(batchId: string): AsyncIterable<RowRecord> { return intake.rows(this.c, batchId); }
  correctionLinks(batchId: string): Promise<CorrectionLink[]> { return intake.correctionLinks(this.c, batchId); }
  setCorrectsBatch(batchId: string, original: string): Promise<void> { return intake.setCorrectsBatch(this.c, batchId, original); }
  correctionsOf(batchId: string, line: number): Promise<RowRecord[]> { return intake.correctionsOf(this.c, batchId, line); }

  // ---- the pipeline
  openBatches(): Promise<BatchRecord[]> { return pipeline.openBatches(this.c); }
  batchReleased(batchId: string): Promise<boolean> { return pipeline.batchReleased(this.c, batchId); }
  rowsInPhases(batchId: string, phases: readonly string[], afterLine: number, limit: number, inputCurrency?: string): Promise<PipelineRow[]> {
    return pipeline.rowsInPhases(this.c, batchId, phases, afterLine, limit, inputCurrency);
  }
  allRowsInPhases(phases: readonly string[]): Promise<PipelineRow[]> { return pipeline.allRowsInPhases(this.c, phases); }
  row(batchId: string, line: number): Promise<PipelineRow | undefined> { return pipeline.row(this.c, batchId, line); }
  /** The row is locked and read again here: a caller's copy (`seen`) is not needed. */
  commitRow(batchId: string, line: number, revision: number, patch: RowPatch): Promise<CommitOutcome> { return commitRow(this.c, batchId, line, revision, patch); }
  movePhase(batchId: string, line: number, from: readonly string[], to: string, outcome?: string | null, detail?: string | null): Promise<boolean> {
    return pipeline.movePhase(this.c, batchId, line, from, to, outcome, detail);
  }
  stopCurrency(currency: string, detail: string, at: string): Promise<{ batches: number; notSent: number }> { return pgPipeline.stopCurrency(this.c, currency, detail, at); }
  endReadyRows(batchId: string, outcome: string, detail: string): Promise<number> { return pipeline.endReadyRows(this.c, batchId, outcome, detail); }
  batchCorridors(batchId: string): Promise<BatchCorridor[]> { return pgPipeline.batchCorridors(this.c, batchId); }
  endReadyRowsOfCorridor(batchId: string, corridor: Omit<BatchCorridor, 'rows'>, outcome: string, detail: string): Promise<Ended> {
    return pgPipeline.endReadyRowsOfCorridor(this.c, batchId, corridor, outcome, detail);
  }
  scheduleRead(batchId: string, line: number, nextReadAt: number, counted: boolean): Promise<void> { return pipeline.scheduleRead(this.c, batchId, line, nextReadAt, counted); }
  dueReads(now: number, limit: number): Promise<PipelineRow[]> { return pgPipeline.dueReads(this.c, now, limit); }
  scheduleOrphans(now: number): Promise<number> { return pipeline.scheduleOrphans(this.c, now); }
  catchUpReads(heardBefore: string, now: number): Promise<number> { return pgPipeline.catchUpReads(this.c, heardBefore, now); }
  nextReads(batchId: string, limit: number): Promise<NextRead[]> { return pipeline.nextReads(this.c, batchId, limit); }
  unsettledRows(batchId: string): Promise<number> { return pipeline.unsettledRows(this.c, batchId); }
  settleBatch(batchId: string, at: string): Promise<void> { return pipeline.settleBatch(this.c, batchId, at); }
  resultRows(batchId: string): AsyncIterable<ResultRow> { return pipeline.resultRows(this.c, batchId); }
  rowByTransaction(transactionId: string): Promise<PipelineRow | undefined> { return pipeline.rowByTransaction(this.c, transactionId); }
  rowBySubmittedExternalId(externalId: string): Promise<PipelineRow | undefined> { return pipeline.rowBySubmittedExternalId(this.c, externalId); }
  recentBatches(since: string): Promise<BatchRecord[]> { return pipeline.recentBatches(this.c, since); }
  rowsWaitingOnSender(senderExternalId: string): Promise<PipelineRow[]> { return pipeline.rowsWaitingOnSender(this.c, senderExternalId); }
  recordHeartbeat(name: string, at: number): Promise<void> { return pipeline.recordHeartbeat(this.c, name, at); }
  lastHeartbeat(name: string): Promise<number | null> { return pipeline.lastHeartbeat(this.c, name); }

  // ---- reports and metrics
  progress(batchId: string): Promise<BatchProgress> { return reports.progress(this.c, batchId); }
  ledgerRows(scope: ReportScope): Promise<LedgerRow[]> { return reports.ledgerRows(this.c, scope); }
  knowsTransaction(transactionId: string): Promise<boolean> { return reports.knowsTransaction(this.c, transactionId); }
  metricsFigures(recentSince: string): Promise<MetricsFigures> { return pgPipeline.metricsFigures(this.c, recentSince); }

  // ---- webhook events, schedules, the workspace lease
  recordWebhookEvent(event: Omit<WebhookEvent, 'id'>): Promise<number | 'replayed'> { return coordination.recordWebhookEvent(this.c, event); }
  unappliedWebhookEvents(limit: number): Promise<WebhookEvent[]> { return coordination.unappliedWebhookEvents(this.c, limit); }
  recordWebhookOutcome(eventId: number, outcome: string, at: string): Promise<void> { return coordination.recordWebhookOutcome(this.c, eventId, outcome, at); }
  webhookEventCounts(): Promise<WebhookEventCounts> { return coordination.webhookEventCounts(this.c); }
  lastScheduleRun(name: string): Promise<number | null> { return coordination.lastScheduleRun(this.c, name); }
  claimScheduleRun(name: string, expected: number | null, at: number): Promise<boolean> { return coordination.claimScheduleRun(this.c, name, expected, at); }
  acquireLease(me: LeaseHolder, isAlive: (holder: LeaseHolder) => boolean, staleAfterMs: number): Promise<LeaseHolder | null> {
    return pgCoordination.acquireLease(this.c, me, isAlive, staleAfterMs);
  }
  renewLease(token: string, at: number): Promise<boolean> { return coordination.renewLease(this.c, token, at); }
  releaseLease(token: string): Promise<void> { return coordination.releaseLease(this.c, token); }

  // ---- approvals and the audit trail
  recordApproval(record: Omit<ApprovalRecord, 'id'>): Promise<void> { return audit.recordApproval(this.c, record); }
  approvalsOf(batchId: string): Promise<ApprovalRecord[]> { return audit.approvalsOf(this.c, batchId); }
  decisionEntries(batchId: string): Promise<AuditEntry[]> { return audit.decisionEntries(this.c, batchId); }
  setApprovalState(batchId: string, state: string, reason: string | null): Promise<void> { return audit.setApprovalState(this.c, batchId, state, reason); }
  acceptedRows(batchId: string): AsyncIterable<{ line: number; request: PayoutRequest }> { return audit.acceptedRows(this.c, batchId); }
  deploymentId(): Promise<string> { return audit.deploymentId(this.c); }
  appendAudit(entry: NewAuditEntry): Promise<void> { return pgAudit.appendAudit(this.c, entry); }
  auditEntries(afterSeq: number, limit: number): Promise<AuditEntry[]> { return audit.auditEntries(this.c, afterSeq, limit); }
  auditHead(except?: string): Promise<{ seq: number; hash: string }> { return audit.auditHead(this.c, except); }
  lastAudit(action: string): Promise<AuditEntry | undefined> { return audit.lastAudit(this.c, action); }

  // ---- the outbox: console sign-ins and notifications
  addConsoleCredential(credential: Omit<ConsoleCredential, 'used_at'>): Promise<void> { return outbox.addConsoleCredential(this.c, credential); }
  consoleCredential(hash: string, now: number): Promise<ConsoleCredential | undefined> { return outbox.consoleCredential(this.c, hash, now); }
  useConsoleCode(hash: string, now: number): Promise<boolean> { return outbox.useConsoleCode(this.c, hash, now); }
  deleteConsoleCredential(hash: string): Promise<void> { return outbox.deleteConsoleCredential(this.c, hash); }
  enqueueNotification(n: Pick<NotificationRecord, 'channel' | 'event' | 'dedupe_key' | 'payload' | 'created_at'>): Promise<boolean> { return outbox.enqueueNotification(this.c, n); }
  claimDueNotifications(now: number, claimUntil: number, limit: number): Promise<NotificationRecord[]> { return pgOutbox.claimDueNotifications(this.c, now, claimUntil, limit); }
  markNotificationDelivered(id: number, at: number): Promise<void> { return outbox.markNotificationDelivered(this.c, id, at); }
  markNotificationFailed(id: number, error: string, nextAttemptAt: number | null, at: number): Promise<void> { return outbox.markNotificationFailed(this.c, id, error, nextAttemptAt, at); }
  notificationCounts(): Promise<ChannelCounts> { return outbox.notificationCounts(this.c); }

  // ---- work shared between workers
  joinWorkers(me: WorkerRecord, isAlive: (worker: WorkerRecord) => boolean): Promise<WorkerRecord | null> { return shared.joinWorkers(this.c, me, isAlive); }
  renewWorker(name: string, token: string, at: number, expiresAt: number): Promise<boolean> { return shared.renewWorker(this.c, name, token, at, expiresAt); }
  leaveWorkers(name: string, token: string): Promise<void> { return shared.leaveWorkers(this.c, name, token); }
  workers(): Promise<WorkerRecord[]> { return shared.workers(this.c); }
  claimRow(batchId: string, line: number, worker: string, now: number): Promise<boolean> { return shared.claimRow(this.c, batchId, line, worker, now); }
  releaseRow(batchId: string, line: number, worker: string): Promise<void> { return shared.releaseRow(this.c, batchId, line, worker); }
  claimReadyRows(batchId: string, worker: string, now: number, limit: number): Promise<PipelineRow[]> { return shared.claimReadyRows(this.c, batchId, worker, now, limit); }
  claimDueReads(worker: string, now: number, limit: number): Promise<PipelineRow[]> { return shared.claimDueReads(this.c, worker, now, limit); }
  claimWebhookEvents(worker: string, now: number, limit: number): Promise<WebhookEvent[]> { return shared.claimWebhookEvents(this.c, worker, now, limit); }
  takeCallSlot(worker: string, slots: number, now: number): Promise<number | null> { return shared.takeCallSlot(this.c, this.slotsMade, worker, slots, now); }
  returnCallSlot(slot: number, worker: string): Promise<void> { return shared.returnCallSlot(this.c, slot, worker); }
  sweepOwnClaims(worker: string, before: number, working: readonly string[], slots: readonly number[]): Promise<Held> { return shared.sweepOwnClaims(this.c, worker, before, working, slots); }
  heldBy(worker: string): Promise<Held> { return shared.heldBy(this.c, worker); }
  addFileChunk(batchId: string, seq: number, bytes: Buffer): Promise<void> { return shared.addFileChunk(this.c, batchId, seq, bytes); }
  fileChunks(batchId: string): AsyncIterable<Buffer> { return shared.fileChunks(this.c, batchId); }
  keepManifest(batchId: string, text: string): Promise<void> { return shared.keepManifest(this.c, batchId, text); }
  keptManifest(batchId: string): Promise<string | null> { return shared.keptManifest(this.c, batchId); }
  orphanedIntakes(worker: string, now: number, ownToo: boolean): Promise<BatchRecord[]> { return shared.orphanedIntakes(this.c, worker, now, ownToo); }
}
