/**
 * The SQLite store: every port of port.ts on better-sqlite3 (synchronous, so
 * each method is atomic), composed of query modules that take the connection:
 * those the two databases share (queries/) and SQLite's own (this folder).
 * It holds no query and no rule of its own; it extends nothing.
 */
import type { AuditEntry, NewAuditEntry } from '../../audit/chain.js';
import type { PayoutRequest } from '../../api/payout-request.js';
import { DatabaseUnusable } from '../../errors.js';
import type { Issue } from '../../validate/issue.js';
import type {
  ApprovalRecord, BatchCorridor, BatchProgress, BatchRecord, CommitOutcome, ConsoleCredential, CorrectionLink, LeaseHolder, LedgerRow, MetricsFigures,
  NewBatch, NewRow, NextRead, NotificationRecord, PipelineRow, ReleaseSeal, ReportScope, ResultRow, RowPatch, RowRecord, RowSeen, Store, WebhookEvent,
  WebhookEventCounts,
} from '../port.js';
import * as audit from '../queries/audit.js';
import * as coordination from '../queries/coordination.js';
import * as intake from '../queries/intake.js';
import * as outbox from '../queries/outbox.js';
import * as pipeline from '../queries/pipeline.js';
import * as reports from '../queries/reports.js';
import * as sqliteAudit from './audit.js';
import { LearnedChanges, commitRow } from './commit.js';
import { SqliteConnection } from './connection.js';
import * as sqliteCoordination from './coordination.js';
import type { SqliteDatabase } from './database.js';
import { damagedMessage, isDamage, migrate, openDatabase } from './database.js';
import * as sqliteIntake from './intake.js';
import { MIGRATIONS } from './migrations.js';
import * as sqliteOutbox from './outbox.js';
import * as sqlitePipeline from './pipeline.js';

type Counts = { ready: number; refused: number; invalid: number };
type Ended = { line: number; external_id: string }[];
type ChannelCounts = Record<string, { waiting: number; delivered: number; given_up: number }>;

export class SqliteStore implements Store {
  private readonly c: SqliteConnection;
  private readonly learned: LearnedChanges;

  private constructor(readonly db: SqliteDatabase) {
    this.c = new SqliteConnection(db);
    this.learned = new LearnedChanges(this.c);
  }

  /** Opens (and migrates) the database. `run` and `watch` have it checked whole beside their work (background-check.ts). */
  static open(file: string): SqliteStore {
    let db: SqliteDatabase | undefined;
    try {
      db = openDatabase(file);
      migrate(db, MIGRATIONS);
    } catch (error) {
      db?.close();
      if (isDamage(error)) throw new DatabaseUnusable(damagedMessage(file, [(error as Error).message]));
      throw error;
    }
    return new SqliteStore(db);
  }

  /** An online copy (SQLite's backup API), consistent even while another process writes. */
  async backup(to: string): Promise<void> {
    await this.db.backup(to);
  }

  close(): Promise<void> { return this.c.close(); }

  // ---- intake
  acceptedBatchWithContent(sha256: string): Promise<BatchRecord | undefined> { return intake.acceptedBatchWithContent(this.c, sha256); }
  beginBatch(batch: NewBatch): Promise<string> { return sqliteIntake.beginBatch(this.c, batch); }
  addRows(batchId: string, rows: readonly NewRow[]): Promise<void> { return sqliteIntake.addRows(this.c, batchId, rows); }
  invalidateRow(batchId: string, line: number, error: Issue): Promise<void> { return sqliteIntake.invalidateRow(this.c, batchId, line, error); }
  suspendIntake(batchId: string): Promise<void> { return sqliteIntake.suspendIntake(this.c, batchId); }
  rejectBatch(batchId: string, reason: string): Promise<boolean> { return sqliteIntake.rejectBatch(this.c, batchId, reason); }
  withdrawBatch(batchId: string, outcome: string, reason: string): Promise<boolean> { return sqliteIntake.withdrawBatch(this.c, batchId, outcome, reason); }
  releaseBatch(batchId: string, seal?: ReleaseSeal): Promise<void> { return intake.releaseBatch(this.c, batchId, seal); }
  requestApproval(batchId: string, submittedBy: string, expiresAt: string): Promise<void> { return intake.requestApproval(this.c, batchId, submittedBy, expiresAt); }
  acceptBatch(batchId: string): Promise<Counts | null> { return sqliteIntake.acceptBatch(this.c, batchId); }
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
  commitRow(batchId: string, line: number, revision: number, patch: RowPatch, seen?: RowSeen): Promise<CommitOutcome> {
    return commitRow(this.c, this.learned, batchId, line, revision, patch, seen);
  }
  movePhase(batchId: string, line: number, from: readonly string[], to: string, outcome?: string | null, detail?: string | null): Promise<boolean> {
    return pipeline.movePhase(this.c, batchId, line, from, to, outcome, detail);
  }
  stopCurrency(currency: string, detail: string, at: string): Promise<{ batches: number; notSent: number }> { return sqlitePipeline.stopCurrency(this.c, currency, detail, at); }
  endReadyRows(batchId: string, outcome: string, detail: string): Promise<number> { return pipeline.endReadyRows(this.c, batchId, outcome, detail); }
  batchCorridors(batchId: string): Promise<BatchCorridor[]> { return sqlitePipeline.batchCorridors(this.c, batchId); }
  endReadyRowsOfCorridor(batchId: string, corridor: Omit<BatchCorridor, 'rows'>, outcome: string, detail: string): Promise<Ended> {
    return sqlitePipeline.endReadyRowsOfCorridor(this.c, batchId, corridor, outcome, detail);
  }
  scheduleRead(batchId: string, line: number, nextReadAt: number, counted: boolean): Promise<void> { return pipeline.scheduleRead(this.c, batchId, line, nextReadAt, counted); }
  dueReads(now: number, limit: number): Promise<PipelineRow[]> { return sqlitePipeline.dueReads(this.c, now, limit); }
  scheduleOrphans(now: number): Promise<number> { return pipeline.scheduleOrphans(this.c, now); }
  catchUpReads(heardBefore: string, now: number): Promise<number> { return sqlitePipeline.catchUpReads(this.c, heardBefore, now); }
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
  metricsFigures(recentSince: string): Promise<MetricsFigures> { return sqlitePipeline.metricsFigures(this.c, recentSince); }

  // ---- webhook events, schedules, the workspace lease
  recordWebhookEvent(event: Omit<WebhookEvent, 'id'>): Promise<number | 'replayed'> { return coordination.recordWebhookEvent(this.c, event); }
  unappliedWebhookEvents(limit: number): Promise<WebhookEvent[]> { return coordination.unappliedWebhookEvents(this.c, limit); }
  recordWebhookOutcome(eventId: number, outcome: string, at: string): Promise<void> { return coordination.recordWebhookOutcome(this.c, eventId, outcome, at); }
  webhookEventCounts(): Promise<WebhookEventCounts> { return coordination.webhookEventCounts(this.c); }
  lastScheduleRun(name: string): Promise<number | null> { return coordination.lastScheduleRun(this.c, name); }
  claimScheduleRun(name: string, expected: number | null, at: number): Promise<boolean> { return coordination.claimScheduleRun(this.c, name, expected, at); }
  acquireLease(me: LeaseHolder, isAlive: (holder: LeaseHolder) => boolean, staleAfterMs: number): Promise<LeaseHolder | null> {
    return sqliteCoordination.acquireLease(this.c, me, isAlive, staleAfterMs);
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
  appendAudit(entry: NewAuditEntry): Promise<void> { return sqliteAudit.appendAudit(this.c, entry); }
  auditEntries(afterSeq: number, limit: number): Promise<AuditEntry[]> { return audit.auditEntries(this.c, afterSeq, limit); }
  auditHead(except?: string): Promise<{ seq: number; hash: string }> { return audit.auditHead(this.c, except); }
  lastAudit(action: string): Promise<AuditEntry | undefined> { return audit.lastAudit(this.c, action); }

  // ---- the outbox: console sign-ins and notifications
  addConsoleCredential(credential: Omit<ConsoleCredential, 'used_at'>): Promise<void> { return outbox.addConsoleCredential(this.c, credential); }
  consoleCredential(hash: string, now: number): Promise<ConsoleCredential | undefined> { return outbox.consoleCredential(this.c, hash, now); }
  useConsoleCode(hash: string, now: number): Promise<boolean> { return outbox.useConsoleCode(this.c, hash, now); }
  deleteConsoleCredential(hash: string): Promise<void> { return outbox.deleteConsoleCredential(this.c, hash); }
  enqueueNotification(n: Pick<NotificationRecord, 'channel' | 'event' | 'dedupe_key' | 'payload' | 'created_at'>): Promise<boolean> { return outbox.enqueueNotification(this.c, n); }
  claimDueNotifications(now: number, claimUntil: number, limit: number): Promise<NotificationRecord[]> { return sqliteOutbox.claimDueNotifications(this.c, now, claimUntil, limit); }
  markNotificationDelivered(id: number, at: number): Promise<void> { return outbox.markNotificationDelivered(this.c, id, at); }
  markNotificationFailed(id: number, error: string, nextAttemptAt: number | null, at: number): Promise<void> { return outbox.markNotificationFailed(this.c, id, error, nextAttemptAt, at); }
  notificationCounts(): Promise<ChannelCounts> { return outbox.notificationCounts(this.c); }
}
