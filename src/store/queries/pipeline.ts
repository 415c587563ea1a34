/**
 * The pipeline's queries that are one statement, the same in both databases,
 * and what both databases' pipelines share: the columns a patch may change,
 * the counters of changes, the open batches, a row as read. The commit itself
 * (compare-and-set) is each database's own (sqlite/commit.ts, postgres/commit.ts).
 */
import type { BatchRecord, NextRead, ObservationSource, PipelineRow, ResultRow } from '../port.js';
import { FOLLOWED, IN_PROCESSING, NEVER_SENT, PIPELINE_COLUMNS, RESULT_ROW_COLUMNS, UNSETTLED, WAITING_ON_SENDER } from '../sql-lists.js';
import { phaseOf, reasonCodeOf } from '../../payout-states.js';
import type { SqlConnection } from './connection.js';
import { marks } from './connection.js';
import { INTAKE_SQL, PAGE_ROWS } from './intake.js';
import { readRequest } from '../../batch/request-text.js';

/** The columns a patch may set, so that no other name ever reaches the SQL; in the order a commit names them. */
export const CHANGEABLE: readonly string[] = [
  'phase', 'outcome', 'outcome_detail', 'transaction_id', 'state', 'state_reason', 'state_reason_code', 'input_amount', 'input_currency',
  'output_amount', 'output_currency', 'refunded_amount', 'created_at', 'funded_at', 'paid_at', 'refunded_at', 'settled_at', 'observed_at',
  'may_cancel', 'heard_at', 'next_read_at', 'fund_attempts', 'cancels_sent', 'cancel_sent_at', 'cancel_accepted_at', 'errors',
];

/** A changed column's value as stored: errors as JSON (none: null), the rest as they are. */
export function storedValue(column: string, value: unknown): unknown {
  if (column === 'errors') return Array.isArray(value) && value.length > 0 ? JSON.stringify(value) : null;
  if (column === 'may_cancel') return maybeFlag(value as boolean | null | undefined);
  return value ?? null;
}

/** A yes, no or not said, as both databases store it (1, 0, null): SQLite has no boolean. */
const maybeFlag = (value: boolean | null | undefined): number | null => (value === true ? 1 : value === false ? 0 : null);
/** The same, read back. */
export const readFlag = (value: unknown): boolean | null => (value === null || value === undefined ? null : Number(value) === 1);

/** The batch's counter of state changes learned each way. */
export const CHANGE_COUNTER: Record<ObservationSource, string> = { webhook: 'changes_by_webhook', polling: 'changes_by_polling', answer: 'changes_by_answer' };

/** The batches whose rows are being sent and followed. */
export const OPEN_BATCHES = "(SELECT id FROM batches WHERE status = 'accepted')";

/** A pipeline row as both databases return it: the request as stored (batch/request-text.ts); none for an invalid row. */
export interface PipelineColumns extends Omit<PipelineRow, 'request' | 'phase' | 'outcome' | 'may_cancel'> {
  request: string | null;
  phase: string;
  outcome: string | null;
  may_cancel?: number | null;
}

/**
 * Its words checked against the vocabulary (payout-states.ts): a word paybatch does not have is an error, not passed on.
 * An invalid row in a phase asked for (cancel asks for any) has no request: it stays null, as the pipeline never sends it.
 */
export const toPipelineRow = (row: PipelineColumns): PipelineRow => ({
  ...row, phase: phaseOf(row.phase), outcome: reasonCodeOf(row.outcome), request: (row.request === null ? null : readRequest(row.request)) as PipelineRow['request'],
  may_cancel: readFlag(row.may_cancel),
});

type ResultColumns = Omit<ResultRow, 'phase' | 'outcome' | 'may_cancel'> & { phase: string; outcome: string | null; may_cancel: number | boolean | null };

/**
 * Checked against the vocabulary and made a yes or no (stored 1, 0, null) in place: a result file of a million rows
 * copies none.
 */
function asResultRow(row: ResultColumns): ResultRow {
  const checked = row as unknown as ResultRow;
  checked.phase = phaseOf(row.phase);
  checked.outcome = reasonCodeOf(row.outcome);
  checked.may_cancel = readFlag(row.may_cancel as number | null);
  return checked;
}

export const PIPELINE_SQL = {
  /** Params: currency, detail, at. The currency's balance ran out: every open batch stops funding in it. */
  stopFunding: `INSERT INTO funding_stops (batch_id, currency, detail, stopped_at) SELECT id, ?, ?, ? FROM batches WHERE status = 'accepted'
    ON CONFLICT (batch_id, currency) DO NOTHING`,
  /** Params: outcome, detail, currency, currency. Their rows not sent yet in that currency end not sent. */
  endStopped: `UPDATE rows SET phase = 'not_sent', outcome = ?, outcome_detail = ?, revision = revision + 1
    WHERE phase = 'ready' AND input_currency = ? AND batch_id IN (SELECT batch_id FROM funding_stops WHERE currency = ?) AND batch_id IN ${OPEN_BATCHES}`,
  /** Param: transaction id, batch, line. Another row that holds the transaction. */
  otherHolder: 'SELECT batch_id, line FROM rows WHERE transaction_id = ? AND NOT (batch_id = ? AND line = ?) LIMIT 1',
  /** Param: now. Rows followed, due now or before. */
  due: `FROM rows WHERE phase IN ${FOLLOWED} AND next_read_at IS NOT NULL AND next_read_at <= ? AND batch_id IN ${OPEN_BATCHES}`,
};

export async function openBatches(c: SqlConnection): Promise<BatchRecord[]> {
  return c.all<BatchRecord>("SELECT * FROM batches WHERE status = 'accepted' ORDER BY received_at, id");
}

export async function batchReleased(c: SqlConnection, batchId: string): Promise<boolean> {
  return (await c.first<{ released: number }>('SELECT released FROM batches WHERE id = ?', [batchId]))?.released === 1;
}

export async function rowsInPhases(c: SqlConnection, batchId: string, phases: readonly string[], afterLine: number, limit: number, inputCurrency?: string): Promise<PipelineRow[]> {
  const currency = inputCurrency === undefined ? '' : ' AND input_currency = ?';
  const rows = await c.all<PipelineColumns>(`SELECT ${PIPELINE_COLUMNS} FROM rows WHERE batch_id = ? AND phase IN (${marks(phases)})${currency} AND line > ? ORDER BY line LIMIT ?`,
    [batchId, ...phases, ...(inputCurrency === undefined ? [] : [inputCurrency]), afterLine, limit]);
  return rows.map(toPipelineRow);
}

export async function allRowsInPhases(c: SqlConnection, phases: readonly string[]): Promise<PipelineRow[]> {
  // By the index of phases: SQLite would otherwise walk every row of the open batches in order.
  const rows = await c.all<PipelineColumns>(`SELECT ${PIPELINE_COLUMNS} FROM rows ${c.dialect.indexedBy('rows_batch_phase')} WHERE batch_id IN ${OPEN_BATCHES}
    AND phase IN (${marks(phases)}) ORDER BY batch_id, line`, phases);
  return rows.map(toPipelineRow);
}

export async function row(c: SqlConnection, batchId: string, line: number): Promise<PipelineRow | undefined> {
  const found = await c.first<PipelineColumns>(`SELECT ${PIPELINE_COLUMNS} FROM rows WHERE batch_id = ? AND line = ?`, [batchId, line]);
  return found && toPipelineRow(found);
}

export async function movePhase(c: SqlConnection, batchId: string, line: number, from: readonly string[], to: string, outcome?: string | null, detail?: string | null): Promise<boolean> {
  const set = outcome === undefined ? '' : ', outcome = ?, outcome_detail = ?';
  const args = outcome === undefined ? [to, batchId, line, ...from] : [to, outcome, detail ?? null, batchId, line, ...from];
  return (await c.run(`UPDATE rows SET phase = ?${set}, revision = revision + 1 WHERE batch_id = ? AND line = ? AND phase IN (${marks(from)})`, args)) === 1;
}

export async function endReadyRows(c: SqlConnection, batchId: string, outcome: string, detail: string): Promise<number> {
  return c.run(INTAKE_SQL.endReady, [outcome, detail, batchId]);
}

export async function scheduleRead(c: SqlConnection, batchId: string, line: number, nextReadAt: number, counted: boolean): Promise<void> {
  await c.run('UPDATE rows SET next_read_at = ?, reads = reads + ? WHERE batch_id = ? AND line = ?', [nextReadAt, counted ? 1 : 0, batchId, line]);
}

export async function scheduleOrphans(c: SqlConnection, now: number): Promise<number> {
  return c.run(`UPDATE rows ${c.dialect.indexedBy('rows_unscheduled')} SET next_read_at = ? WHERE phase IN ${FOLLOWED} AND next_read_at IS NULL AND batch_id IN ${OPEN_BATCHES}`, [now]);
}

export async function nextReads(c: SqlConnection, batchId: string, limit: number): Promise<NextRead[]> {
  const rows = await c.all<Omit<NextRead, 'phase'> & { phase: string }>(`SELECT line, external_id, phase, state, next_read_at FROM rows WHERE batch_id = ? AND phase IN ${UNSETTLED}
    ORDER BY next_read_at IS NULL, next_read_at, line LIMIT ?`, [batchId, limit]);
  return rows.map((row) => ({ ...row, phase: phaseOf(row.phase) }));
}

export async function unsettledRows(c: SqlConnection, batchId: string): Promise<number> {
  return Number((await c.first<{ n: number }>(`SELECT COUNT(*) AS n FROM rows WHERE batch_id = ? AND phase IN ${UNSETTLED}`, [batchId]))?.n ?? 0);
}

export async function settleBatch(c: SqlConnection, batchId: string, at: string): Promise<void> {
  await c.run("UPDATE batches SET status = 'settled', settled_at = ? WHERE id = ? AND status = 'accepted'", [at, batchId]);
}

export async function* resultRows(c: SqlConnection, batchId: string, afterLine = 0): AsyncIterable<ResultRow> {
  for (let after = afterLine; ; ) {
    const page = (await c.all<ResultColumns>(`SELECT ${RESULT_ROW_COLUMNS} FROM rows WHERE batch_id = ? AND line > ? ORDER BY line LIMIT ${PAGE_ROWS}`, [batchId, after])).map(asResultRow);
    if (page.length === 0) return;
    yield* page;
    after = (page[page.length - 1] as ResultRow).line;
  }
}

export async function rowByTransaction(c: SqlConnection, transactionId: string): Promise<PipelineRow | undefined> {
  const found = await c.first<PipelineColumns>(`SELECT ${PIPELINE_COLUMNS} FROM rows WHERE transaction_id = ? LIMIT 1`, [transactionId]);
  return found && toPipelineRow(found);
}

export async function rowBySubmittedExternalId(c: SqlConnection, externalId: string): Promise<PipelineRow | undefined> {
  const found = await c.first<PipelineColumns>(`SELECT ${PIPELINE_COLUMNS} FROM rows WHERE external_id = ? AND phase NOT IN ${NEVER_SENT}`, [externalId]);
  return found && toPipelineRow(found);
}

export async function recentBatches(c: SqlConnection, since: string): Promise<BatchRecord[]> {
  return c.all<BatchRecord>(`SELECT * FROM batches WHERE status IN ${IN_PROCESSING} OR received_at >= ? ORDER BY received_at DESC, id DESC`, [since]);
}

export async function rowsWaitingOnSender(c: SqlConnection, senderExternalId: string): Promise<PipelineRow[]> {
  // By the index of phases: SQLite would otherwise read the open batches whole by their key, every row's request
  // parsed (0.7 s a sender.approved event on a million rows, the daemon deaf to webhooks meanwhile).
  const rows = await c.all<PipelineColumns>(`SELECT ${PIPELINE_COLUMNS} FROM rows ${c.dialect.indexedBy('rows_batch_phase')} WHERE batch_id IN ${OPEN_BATCHES}
    AND phase = 'created' AND state IN ${WAITING_ON_SENDER} AND ${c.dialect.requestField('senderExternalId')} = ? ORDER BY batch_id, line`, [senderExternalId]);
  return rows.map(toPipelineRow);
}

export async function recordHeartbeat(c: SqlConnection, name: string, at: number): Promise<void> {
  await c.run('INSERT INTO heartbeats (name, at) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET at = excluded.at', [name, at]);
}

export async function lastHeartbeat(c: SqlConnection, name: string): Promise<number | null> {
  return (await c.first<{ at: number }>('SELECT at FROM heartbeats WHERE name = ?', [name]))?.at ?? null;
}
