/**
 * The audit trail and the approvals kept beside it, the same in both
 * databases. Appending is each database's own (sqlite/audit.ts,
 * postgres/audit.ts): the entry is chained to the last one inside the caller's
 * transaction, by SQLite with these statements, by PostgreSQL in one call of
 * its own.
 */
import type { AuditEntry, NewAuditEntry } from '../../audit/chain.js';
import { GENESIS, chained } from '../../audit/chain.js';
import { entryBatch } from '../../audit/entry-batch.js';
import type { PayoutRequest } from '../../api/payout-request.js';
import type { ApprovalRecord } from '../port.js';
import { NOT_SENDABLE } from '../sql-lists.js';
import type { SqlConnection } from './connection.js';
import { PAGE_ROWS } from './intake.js';
import { readRequest } from '../../batch/request-text.js';

/** An entry's columns as the chain knows them (batch_id, derived, is the pages' index only). */
export const AUDIT_COLUMNS = 'seq, version, at, actor, action, subject, details, prev_hash, hash';

export const AUDIT_SQL = {
  lastHash: 'SELECT hash FROM audit_log ORDER BY seq DESC LIMIT 1',
  append: 'INSERT INTO audit_log (version, at, actor, action, subject, details, prev_hash, hash, batch_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
};

/** The entry as stored after `last` (the trail's last hash), and the values of AUDIT_SQL.append. */
export function auditRow(last: string, entry: NewAuditEntry): { hash: string; values: unknown[] } {
  const stored = chained(last, entry);
  const batch = entryBatch(stored.subject, stored.details);
  return { hash: stored.hash, values: [stored.version, stored.at, stored.actor, stored.action, stored.subject, stored.details, stored.prev_hash, stored.hash, batch] };
}

/** The first hash of a trail: its genesis, when it has no entry yet. */
export const lastHashOr = (hash: string | undefined): string => hash ?? GENESIS;

export async function auditEntries(c: SqlConnection, afterSeq: number, limit: number): Promise<AuditEntry[]> {
  return c.all<AuditEntry>(`SELECT ${AUDIT_COLUMNS} FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?`, [afterSeq, limit]);
}

export async function auditHead(c: SqlConnection, except = ''): Promise<{ seq: number; hash: string }> {
  return (await c.first<{ seq: number; hash: string }>('SELECT seq, hash FROM audit_log WHERE action <> ? ORDER BY seq DESC LIMIT 1', [except])) ?? { seq: 0, hash: GENESIS };
}

export async function lastAudit(c: SqlConnection, action: string): Promise<AuditEntry | undefined> {
  return c.first<AuditEntry>(`SELECT ${AUDIT_COLUMNS} FROM audit_log WHERE action = ? ORDER BY seq DESC LIMIT 1`, [action]);
}

export async function recordApproval(c: SqlConnection, record: Omit<ApprovalRecord, 'id'>): Promise<void> {
  await c.run('INSERT INTO approvals (batch_id, person, decision, statement, signature, reason, at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    [record.batch_id, record.person, record.decision, record.statement, record.signature, record.reason, record.at]);
}

export async function deploymentId(c: SqlConnection): Promise<string> {
  return (await c.first<{ id: string }>('SELECT id FROM deployment WHERE one = 1'))?.id as string;
}

export async function approvalsOf(c: SqlConnection, batchId: string): Promise<ApprovalRecord[]> {
  return c.all<ApprovalRecord>('SELECT * FROM approvals WHERE batch_id = ? ORDER BY id', [batchId]);
}

export async function decisionEntries(c: SqlConnection, batchId: string): Promise<AuditEntry[]> {
  return c.all<AuditEntry>(`SELECT ${AUDIT_COLUMNS} FROM audit_log WHERE subject = ? AND action IN ('approved', 'rejected') ORDER BY seq`, [batchId]);
}

export async function setApprovalState(c: SqlConnection, batchId: string, state: string, reason: string | null): Promise<void> {
  await c.run('UPDATE batches SET approval = ?, approval_reason = ? WHERE id = ?', [state, reason, batchId]);
}

/** The rows accepted to be sent, in file order, as they will be sent: what an approver signs for. */
export async function* acceptedRows(c: SqlConnection, batchId: string): AsyncIterable<{ line: number; request: PayoutRequest }> {
  for (let after = 0; ; ) {
    const page = await c.all<{ line: number; request: string }>(`SELECT line, request FROM rows WHERE batch_id = ? AND line > ? AND request IS NOT NULL
      AND phase NOT IN ${NOT_SENDABLE} ORDER BY line LIMIT ${PAGE_ROWS}`, [batchId, after]);
    if (page.length === 0) return;
    for (const row of page) yield { line: row.line, request: readRequest(row.request) };
    after = (page[page.length - 1] as { line: number }).line;
  }
}
