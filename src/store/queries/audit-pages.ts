/**
 * The audit trail as the console pages it: newest first by keyset (an entry's
 * sequence number, never an offset), filtered by action and batch through
 * their indexes; the reconciliation reports it recorded; and the verification
 * kept (audit_checkpoint), moved only by compare-and-set on the sequence it was
 * seen at, so that two consoles extending it at once never step back.
 */
import type { AuditEntry } from '../../audit/chain.js';
import type { AuditCheckpoint, AuditPageFilter } from '../port.js';
import { AUDIT_COLUMNS } from './audit.js';
import type { SqlConnection } from './connection.js';

/**
 * The actions every row writes as it is sent: not in the action index (migration 18, PostgreSQL 13), whose pages would
 * otherwise be in every commit of sending. Dense in the trail, they are found by walking it back from the newest.
 */
export const ROW_ACTIONS = ['create_requested', 'fund_requested', 'state_learned'] as const;
/** The action index's own condition, written as its migration writes it: a query must say it to be answered from it. */
const NOT_ROW_ACTION = `action NOT IN (${ROW_ACTIONS.map((a) => `'${a}'`).join(', ')})`;
const isRowAction = (action: string): boolean => (ROW_ACTIONS as readonly string[]).includes(action);

/** The newest `limit` entries of the filter, older than `before` when given. */
export async function auditPage(c: SqlConnection, filter: AuditPageFilter, limit: number): Promise<AuditEntry[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.batch) {
    where.push('batch_id = ?');
    params.push(filter.batch);
  }
  const byActionIndex = filter.action !== undefined && !filter.batch && !isRowAction(filter.action);
  if (filter.action) {
    where.push('action = ?');
    params.push(filter.action);
    if (byActionIndex) where.push(NOT_ROW_ACTION);
  }
  if (filter.before !== undefined) {
    where.push('seq < ?');
    params.push(filter.before);
  }
  // SQLite, with no statistics, would walk the primary key backwards; a batch's entries, or an action's, are found by their index.
  const index = filter.batch ? c.dialect.indexedBy('audit_log_batch') : byActionIndex ? c.dialect.indexedBy('audit_log_action') : '';
  const text = `SELECT ${AUDIT_COLUMNS} FROM audit_log ${index} ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT ?`;
  const rows = await c.all<AuditEntry>(text, [...params, limit]);
  return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
}

export async function auditEntryAt(c: SqlConnection, seq: number): Promise<AuditEntry | undefined> {
  const row = await c.first<AuditEntry>(`SELECT ${AUDIT_COLUMNS} FROM audit_log WHERE seq = ?`, [seq]);
  return row && { ...row, seq: Number(row.seq) };
}

/** The reconciliation reports the trail recorded, in order. */
export async function reconciliationEntries(c: SqlConnection): Promise<AuditEntry[]> {
  return c.all<AuditEntry>(`SELECT ${AUDIT_COLUMNS} FROM audit_log ${c.dialect.indexedBy('audit_log_action')}
    WHERE action = 'report_written' AND ${NOT_ROW_ACTION} AND subject LIKE 'reconciliation %' ORDER BY seq`);
}

export async function auditCheckpoint(c: SqlConnection): Promise<AuditCheckpoint> {
  const row = await c.first<{ seq: number | string; hash: string; verified_at: string | null; counts: string }>('SELECT seq, hash, verified_at, counts FROM audit_checkpoint WHERE one = 1');
  if (!row) throw new Error('audit_checkpoint has no row: the store was not migrated');
  return { seq: Number(row.seq), hash: row.hash, verified_at: row.verified_at, counts: JSON.parse(row.counts) as AuditCheckpoint['counts'] };
}

/** Moves the kept verification to `next` if it still stands at `fromSeq`; false when another moved it first. */
export async function moveAuditCheckpoint(c: SqlConnection, fromSeq: number, next: AuditCheckpoint): Promise<boolean> {
  const changed = await c.run('UPDATE audit_checkpoint SET seq = ?, hash = ?, verified_at = ?, counts = ? WHERE one = 1 AND seq = ?',
    [next.seq, next.hash, next.verified_at, JSON.stringify(next.counts), fromSeq]);
  return changed === 1;
}

/** A batch's summary kept for the console, with what it was made from (its basis). */
export async function keptBatchSummary(c: SqlConnection, batchId: string): Promise<{ basis: string; summary: string } | undefined> {
  return c.first<{ basis: string; summary: string }>('SELECT basis, summary FROM batch_summaries WHERE batch_id = ?', [batchId]);
}

export async function keepBatchSummary(c: SqlConnection, batchId: string, basis: string, summary: string): Promise<void> {
  await c.run('INSERT INTO batch_summaries (batch_id, basis, summary) VALUES (?, ?, ?) ON CONFLICT (batch_id) DO UPDATE SET basis = excluded.basis, summary = excluded.summary',
    [batchId, basis, summary]);
}
