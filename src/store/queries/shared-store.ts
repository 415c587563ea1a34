/**
 * The part of the store both databases give the same way: every port method
 * whose query is written once in this folder, bound to a connection. Each
 * database's store (sqlite/sqlite-store.ts, postgres/postgres-store.ts) is this
 * part and its own (the methods named in DialectOwn), composed: nothing extends
 * anything.
 */
import type { Store } from '../port.js';
import * as audit from './audit.js';
import * as auditPages from './audit-pages.js';
import type { SqlConnection } from './connection.js';
import * as coordination from './coordination.js';
import * as duplicates from './duplicates.js';
import * as intake from './intake.js';
import * as outbox from './outbox.js';
import * as pipeline from './pipeline.js';
import * as reports from './reports.js';

/** The methods each database gives its own way: transactions of several statements, claims, snapshots. */
export type DialectOwn =
  | 'beginBatch' | 'addRows' | 'rowsStored' | 'invalidateRow' | 'suspendIntake' | 'rejectBatch' | 'withdrawBatch' | 'acceptBatch'
  | 'commitRow' | 'stopCurrency' | 'batchCorridors' | 'endReadyRowsOfCorridor' | 'dueReads' | 'catchUpReads' | 'metricsFigures'
  | 'acquireLease' | 'appendAudit' | 'claimDueNotifications' | 'close'
  // possible duplicates: the writes of several statements (statements in duplicates.ts, run in each database's transaction)
  | 'recordPossibleDuplicates' | 'allowDuplicate' | 'indexRecipients';

export type SharedStore = Omit<Store, DialectOwn>;

export function sharedStore(c: SqlConnection): SharedStore {
  return {
    // intake
    acceptedBatchWithContent: (sha256) => intake.acceptedBatchWithContent(c, sha256),
    endedBatchWithContent: (sha256, after) => intake.endedBatchWithContent(c, sha256, after),
    releaseBatch: (batchId, seal) => intake.releaseBatch(c, batchId, seal),
    requestApproval: (batchId, submittedBy, expiresAt) => intake.requestApproval(c, batchId, submittedBy, expiresAt),
    batch: (id) => intake.batch(c, id),
    batchesInProcessing: () => intake.batchesInProcessing(c),
    interruptedIntakes: () => intake.interruptedIntakes(c),
    rows: (batchId) => intake.rows(c, batchId),
    correctionLinks: (batchId) => intake.correctionLinks(c, batchId),
    setCorrectsBatch: (batchId, original) => intake.setCorrectsBatch(c, batchId, original),
    correctionsOf: (batchId, line) => intake.correctionsOf(c, batchId, line),
    // the pipeline
    openBatches: () => pipeline.openBatches(c),
    batchReleased: (batchId) => pipeline.batchReleased(c, batchId),
    rowsInPhases: (batchId, phases, afterLine, limit, inputCurrency) => pipeline.rowsInPhases(c, batchId, phases, afterLine, limit, inputCurrency),
    allRowsInPhases: (phases) => pipeline.allRowsInPhases(c, phases),
    row: (batchId, line) => pipeline.row(c, batchId, line),
    movePhase: (batchId, line, from, to, outcome, detail) => pipeline.movePhase(c, batchId, line, from, to, outcome, detail),
    endReadyRows: (batchId, outcome, detail) => pipeline.endReadyRows(c, batchId, outcome, detail),
    scheduleRead: (batchId, line, nextReadAt, counted) => pipeline.scheduleRead(c, batchId, line, nextReadAt, counted),
    scheduleOrphans: (now) => pipeline.scheduleOrphans(c, now),
    nextReads: (batchId, limit) => pipeline.nextReads(c, batchId, limit),
    unsettledRows: (batchId) => pipeline.unsettledRows(c, batchId),
    settleBatch: (batchId, at) => pipeline.settleBatch(c, batchId, at),
    resultRows: (batchId, afterLine) => pipeline.resultRows(c, batchId, afterLine),
    rowByTransaction: (transactionId) => pipeline.rowByTransaction(c, transactionId),
    rowBySubmittedExternalId: (externalId) => pipeline.rowBySubmittedExternalId(c, externalId),
    recentBatches: (since) => pipeline.recentBatches(c, since),
    rowsWaitingOnSender: (senderExternalId) => pipeline.rowsWaitingOnSender(c, senderExternalId),
    recordHeartbeat: (name, at) => pipeline.recordHeartbeat(c, name, at),
    lastHeartbeat: (name) => pipeline.lastHeartbeat(c, name),
    // possible duplicates (engine/duplicates.ts decides)
    twinsOf: (query, since, limit) => duplicates.twinsOf(c, query, since, limit),
    batchTwins: (batchId, after, upto, since) => duplicates.batchTwins(c, batchId, after, upto, since),
    sameBatchTwins: (batchId, after, upto) => duplicates.sameBatchTwins(c, batchId, after, upto),
    lastRecipientLine: (batchId) => duplicates.lastRecipientLine(c, batchId),
    rowsAtLines: (batchId, lines) => duplicates.rowsAtLines(c, batchId, lines),
    possibleDuplicates: (batchId) => duplicates.possibleDuplicates(c, batchId),
    heldDuplicates: (limit) => duplicates.heldDuplicates(c, limit),
    endHeldDuplicates: (batchId, outcome, detail) => duplicates.endHeldDuplicates(c, batchId, outcome, detail),
    // reports
    progress: (batchId) => reports.progress(c, batchId),
    ledgerRows: (scope) => reports.ledgerRows(c, scope),
    ledgerRowPage: (scope, after, limit) => reports.ledgerRowPage(c, scope, after, limit),
    knowsTransaction: (transactionId) => reports.knowsTransaction(c, transactionId),
    // webhook events, schedules, the workspace lease
    recordWebhookEvent: (event) => coordination.recordWebhookEvent(c, event),
    unappliedWebhookEvents: (limit) => coordination.unappliedWebhookEvents(c, limit),
    recordWebhookOutcome: (eventId, outcome, at) => coordination.recordWebhookOutcome(c, eventId, outcome, at),
    webhookEventCounts: () => coordination.webhookEventCounts(c),
    lastScheduleRun: (name) => coordination.lastScheduleRun(c, name),
    claimScheduleRun: (name, expected, at) => coordination.claimScheduleRun(c, name, expected, at),
    renewLease: (token, at) => coordination.renewLease(c, token, at),
    releaseLease: (token) => coordination.releaseLease(c, token),
    ...approvalsAuditAndOutbox(c),
  };
}

/** The approvals, the audit trail and the outbox: the same on every database (split from sharedStore for its length). */
function approvalsAuditAndOutbox(c: SqlConnection): Pick<SharedStore, 'recordApproval' | 'approvalsOf' | 'decisionEntries' | 'setApprovalState' | 'acceptedRows' | 'deploymentId' | 'auditEntries' | 'auditHead' | 'lastAudit' | 'auditPage' | 'auditEntryAt' | 'reconciliationEntries' | 'auditCheckpoint' | 'moveAuditCheckpoint' | 'keptBatchSummary' | 'keepBatchSummary' | 'addConsoleCredential' | 'consoleCredential' | 'useConsoleCode' | 'deleteConsoleCredential' | 'enqueueNotification' | 'markNotificationDelivered' | 'markNotificationFailed' | 'notificationCounts'> {
  return {
    // approvals and the audit trail
    recordApproval: (record) => audit.recordApproval(c, record),
    approvalsOf: (batchId) => audit.approvalsOf(c, batchId),
    decisionEntries: (batchId) => audit.decisionEntries(c, batchId),
    setApprovalState: (batchId, state, reason) => audit.setApprovalState(c, batchId, state, reason),
    acceptedRows: (batchId) => audit.acceptedRows(c, batchId),
    deploymentId: () => audit.deploymentId(c),
    auditEntries: (afterSeq, limit) => audit.auditEntries(c, afterSeq, limit),
    auditHead: (except) => audit.auditHead(c, except),
    lastAudit: (action) => audit.lastAudit(c, action),
    auditPage: (filter, limit) => auditPages.auditPage(c, filter, limit),
    auditEntryAt: (seq) => auditPages.auditEntryAt(c, seq),
    reconciliationEntries: () => auditPages.reconciliationEntries(c),
    auditCheckpoint: () => auditPages.auditCheckpoint(c),
    moveAuditCheckpoint: (fromSeq, next) => auditPages.moveAuditCheckpoint(c, fromSeq, next),
    keptBatchSummary: (batchId) => auditPages.keptBatchSummary(c, batchId),
    keepBatchSummary: (batchId, basis, summary) => auditPages.keepBatchSummary(c, batchId, basis, summary),
    // the outbox: console sign-ins and notifications
    addConsoleCredential: (credential) => outbox.addConsoleCredential(c, credential),
    consoleCredential: (hash, now) => outbox.consoleCredential(c, hash, now),
    useConsoleCode: (hash, now) => outbox.useConsoleCode(c, hash, now),
    deleteConsoleCredential: (hash) => outbox.deleteConsoleCredential(c, hash),
    enqueueNotification: (n) => outbox.enqueueNotification(c, n),
    markNotificationDelivered: (id, at) => outbox.markNotificationDelivered(c, id, at),
    markNotificationFailed: (id, error, nextAttemptAt, at) => outbox.markNotificationFailed(c, id, error, nextAttemptAt, at),
    notificationCounts: () => outbox.notificationCounts(c),
  };
}
