/**
 * What reports and progress read, the same in both databases: the rows of a
 * reconciliation, a batch's progress, and the statements behind /metrics
 * (metrics-figures.ts), whose one snapshot each database takes its own way.
 */
import type { BatchProgress, LedgerRow, ReportScope } from '../port.js';
import { AT_SERVICE, NOT_SENDABLE, NOT_SENT_YET, REFUSALS, SENDING, SETTLED, UNSETTLED } from '../sql-lists.js';
import type { SqlConnection } from './connection.js';

// A row never created (not sent for lack of balance) counts from when its batch was received.
const LEDGER_COLUMNS = `r.batch_id, r.line, r.external_id, r.transaction_id, r.phase, r.outcome, r.outcome_detail, r.state, r.state_reason, r.state_reason_code,
  r.input_amount, r.input_currency, r.output_amount, r.output_currency, r.refunded_amount, r.errors,
  COALESCE(r.created_at, b.received_at) AS created_at, r.funded_at, r.paid_at, r.refunded_at, r.observed_at,
  r.recipient_name, r.settled_at, r.original_batch, r.original_line`;

/**
 * Every row of the batch; or, for a period [from, to), the rows funded before
 * its end and not paid out or refunded before its start, and the rows refused
 * (quote, balance) or held in it.
 */
export async function ledgerRows(c: SqlConnection, scope: ReportScope): Promise<LedgerRow[]> {
  return ledgerRowPage(c, scope, null, null);
}

/** The same rows, a page of at most `limit` after `after` in the order (batch, line): a report read in pages by keyset. */
export async function ledgerRowPage(c: SqlConnection, scope: ReportScope, after: { batch: string; line: number } | null, limit: number | null): Promise<LedgerRow[]> {
  // A row value, which both databases take as where to start in the primary key. Written as `batch > ? OR (batch = ?
  // AND line > ?)`, SQLite scanned from the first row for every page: a day's report of 200,000 rows read 4 million.
  const keyset = after === null ? '' : ' AND (r.batch_id, r.line) > (?, ?)';
  const afterValues = after === null ? [] : [after.batch, after.line];
  const page = limit === null ? '' : ` LIMIT ${Math.floor(limit)}`;
  if ('batch' in scope) {
    return c.all<LedgerRow>(`SELECT ${LEDGER_COLUMNS} FROM rows r JOIN batches b ON b.id = r.batch_id WHERE r.batch_id = ?${keyset} ORDER BY r.batch_id, r.line${page}`, [scope.batch, ...afterValues]);
  }
  return c.all<LedgerRow>(`SELECT ${LEDGER_COLUMNS} FROM rows r JOIN batches b ON b.id = r.batch_id
    WHERE ((r.funded_at < ? AND (r.paid_at IS NULL OR r.paid_at >= ?) AND (r.refunded_at IS NULL OR r.refunded_at >= ?))
       OR ((r.outcome IN ${REFUSALS} OR r.phase = 'held') AND COALESCE(r.created_at, b.received_at) >= ? AND COALESCE(r.created_at, b.received_at) < ?))${keyset}
    ORDER BY r.batch_id, r.line${page}`, [scope.to, scope.from, scope.from, scope.from, scope.to, ...afterValues]);
}

export async function knowsTransaction(c: SqlConnection, transactionId: string): Promise<boolean> {
  return (await c.first('SELECT 1 FROM rows WHERE transaction_id = ? LIMIT 1', [transactionId])) !== undefined;
}

export async function progress(c: SqlConnection, batchId: string): Promise<BatchProgress> {
  const counts = await c.first<BatchProgress>(`SELECT
      COUNT(*) FILTER (WHERE r.phase NOT IN ${NOT_SENDABLE}) AS sendable,
      COUNT(r.transaction_id) AS created,
      COUNT(r.funded_at) AS funded,
      COUNT(*) FILTER (WHERE r.phase IN ${SETTLED}) AS settled,
      COUNT(*) FILTER (WHERE r.phase IN ${UNSETTLED}) AS unsettled,
      COUNT(*) FILTER (WHERE r.phase IN ${NOT_SENT_YET}) AS not_sent_yet,
      COUNT(*) FILTER (WHERE r.phase IN ${SENDING}) AS sending,
      COUNT(*) FILTER (WHERE r.phase IN ${AT_SERVICE}) AS at_service,
      MIN(CASE WHEN r.phase IN ${AT_SERVICE} THEN r.created_at END) AS oldest_in_flight_at,
      MIN(CASE WHEN r.phase IN ${UNSETTLED} THEN COALESCE(r.created_at, b.received_at) END) AS oldest_unsettled_at
    FROM rows r JOIN batches b ON b.id = r.batch_id WHERE r.batch_id = ?`, [batchId]);
  return counts as BatchProgress;
}
