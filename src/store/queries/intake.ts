/**
 * Intake's queries that read or write one statement, the same in both
 * databases; and the statements both databases' intake transactions
 * (sqlite/intake.ts, postgres/intake.ts) run, written once here.
 */
import type { RowColumns } from '../row-record.js';
import { toRowRecord } from '../row-record.js';
import type { BatchRecord, CorrectionLink, ReleaseSeal, RowRecord } from '../port.js';
import { ACCEPTED_ONCE, BEFORE_SENDING, EXTERNAL_ID_USED, IN_PROCESSING, NEVER_SENT, NOTHING_SENT, ROW_RECORD_COLUMNS } from '../sql-lists.js';
import type { SqlConnection } from './connection.js';

/** Rows a page of a batch's rows holds. */
export const PAGE_ROWS = 1000;

/** A batch's id: the day it was received and the start of its content's SHA-256 (numbered after the first). */
export const batchIdStem = (receivedAt: string, sha256: string): string => `B${receivedAt.slice(0, 10).replace(/-/g, '')}-${sha256.slice(0, 8)}`;

export const INTAKE_SQL = {
  /** Param: batch. */
  batchStatus: 'SELECT status FROM batches WHERE id = ?',
  /** Param: batch. The earliest other batch accepted with its content (SHA-256), if any: checked at acceptance. */
  sameContentAccepted: `SELECT o.* FROM batches b JOIN batches o ON o.sha256 = b.sha256 AND o.id <> b.id
    WHERE b.id = ? AND o.status IN ${ACCEPTED_ONCE} ORDER BY o.received_at LIMIT 1`,
  addToTotal: 'UPDATE batches SET rows_total = rows_total + ? WHERE id = ?',
  /** Params: errors (JSON), batch, line. A finding across rows made it invalid. */
  invalidate: "UPDATE rows SET phase = 'invalid', errors = ? WHERE batch_id = ? AND line = ?",
  /**
   * Params: batch, line. With invalidate: a row made invalid is nobody's twin, not even within its own file. Its entry
   * by payment first (written once its batch's rows were all stored: there may be none yet), then its entry by line.
   */
  forgetPayment: `DELETE FROM recipient_payments WHERE (recipient_key, currency, amount, batch_id, line) IN
    (SELECT recipient_key, currency, amount, batch_id, line FROM row_recipients WHERE batch_id = ? AND line = ?)`,
  /** Params: batch, line. */
  forgetRecipient: 'DELETE FROM row_recipients WHERE batch_id = ? AND line = ?',
  /** Params: reason, batch. False (0) when it was not in intake. */
  reject: "UPDATE batches SET status = 'rejected', reason = ? WHERE id = ? AND status = 'intake'",
  /** Param: batch. Rows stored sendable, or made so by an acceptance cut short, end with the rest: nothing of the batch was sent. */
  endUnsent: `UPDATE rows SET phase = 'not_sent' WHERE batch_id = ? AND phase IN ${BEFORE_SENDING}`,
  /** Param: batch. A row of it that went to the service (or is going). */
  anySent: `SELECT 1 FROM rows WHERE batch_id = ? AND phase NOT IN ${NOTHING_SENT} LIMIT 1`,
  /** Params: outcome, detail, batch. */
  endReady: "UPDATE rows SET phase = 'not_sent', outcome = ?, outcome_detail = ?, revision = revision + 1 WHERE batch_id = ? AND phase = 'ready'",
  /** Params: reason, batch. */
  withdraw: "UPDATE batches SET status = 'rejected', reason = ? WHERE id = ?",
  /** Params: rows made ready, batch. */
  accept: "UPDATE batches SET status = 'accepted', rows_valid = ? WHERE id = ?",
  /** Params: batch, phase. */
  countInPhase: 'SELECT COUNT(*) AS n FROM rows WHERE batch_id = ? AND phase = ?',
  /** Rows whose external_id another batch sent or will send are refused at acceptance (by `alias`, the row looked at). */
  usedElsewhere: (alias: string): string => `EXISTS (SELECT 1 FROM rows o WHERE o.external_id = ${alias}.external_id AND o.batch_id <> ${alias}.batch_id AND o.phase NOT IN ${NEVER_SENT})`,
  refuseUsed: `phase = 'refused', outcome = ${EXTERNAL_ID_USED}`,
};

export async function acceptedBatchWithContent(c: SqlConnection, sha256: string): Promise<BatchRecord | undefined> {
  return c.first<BatchRecord>(`SELECT * FROM batches WHERE sha256 = ? AND status IN ${ACCEPTED_ONCE} ORDER BY received_at LIMIT 1`, [sha256]);
}

/** The latest batch of this content received after `after` that ended at its release (its approval rejected, expired or held), if any. */
export async function endedBatchWithContent(c: SqlConnection, sha256: string, after: string): Promise<BatchRecord | undefined> {
  return c.first<BatchRecord>("SELECT * FROM batches WHERE sha256 = ? AND received_at > ? AND status = 'rejected' AND approval IN ('rejected', 'expired', 'held') ORDER BY received_at DESC LIMIT 1", [sha256, after]);
}

export async function releaseBatch(c: SqlConnection, batchId: string, seal?: ReleaseSeal): Promise<void> {
  await c.run('UPDATE batches SET released = 1, released_at = ?, release_seal = ? WHERE id = ?', [seal?.at ?? null, seal?.seal ?? null, batchId]);
}

export async function requestApproval(c: SqlConnection, batchId: string, submittedBy: string, expiresAt: string): Promise<void> {
  await c.run("UPDATE batches SET submitted_by = ?, approval = 'awaiting', approval_expires_at = ? WHERE id = ?", [submittedBy, expiresAt, batchId]);
}

export async function batchesInProcessing(c: SqlConnection): Promise<BatchRecord[]> {
  return c.all<BatchRecord>(`SELECT * FROM batches WHERE status IN ${IN_PROCESSING}`);
}

export async function interruptedIntakes(c: SqlConnection): Promise<BatchRecord[]> {
  return c.all<BatchRecord>("SELECT * FROM batches WHERE status = 'intake' ORDER BY received_at, id");
}

export async function batch(c: SqlConnection, id: string): Promise<BatchRecord | undefined> {
  return c.first<BatchRecord>('SELECT * FROM batches WHERE id = ?', [id]);
}

export async function correctionLinks(c: SqlConnection, batchId: string): Promise<CorrectionLink[]> {
  return c.all<CorrectionLink>('SELECT line, external_id, original_batch, original_line FROM rows WHERE batch_id = ? AND original_batch IS NOT NULL ORDER BY line', [batchId]);
}

export async function setCorrectsBatch(c: SqlConnection, batchId: string, original: string): Promise<void> {
  await c.run('UPDATE batches SET corrects_batch = ? WHERE id = ?', [original, batchId]);
}

export async function correctionsOf(c: SqlConnection, batchId: string, line: number): Promise<RowRecord[]> {
  return (await c.all<RowColumns>(`SELECT ${ROW_RECORD_COLUMNS} FROM rows WHERE original_batch = ? AND original_line = ? ORDER BY batch_id, line`, [batchId, line])).map(toRowRecord);
}

/** The rows of a batch in file order, in pages, not one long-lived cursor: other operations may write in between. */
export async function* rows(c: SqlConnection, batchId: string): AsyncIterable<RowRecord> {
  for (let after = 0; ; ) {
    const page = await c.all<RowColumns>(`SELECT ${ROW_RECORD_COLUMNS} FROM rows WHERE batch_id = ? AND line > ? ORDER BY line LIMIT ${PAGE_ROWS}`, [batchId, after]);
    if (page.length === 0) return;
    for (const row of page) yield toRowRecord(row);
    after = (page[page.length - 1] as RowColumns).line;
  }
}
