/**
 * Appending to the audit trail in PostgreSQL: inside the caller's transaction,
 * chained to the last entry, serialised across workers by an advisory lock.
 */
import type { NewAuditEntry } from '../../audit/chain.js';
import { AUDIT_SQL, auditRow, lastHashOr } from '../queries/audit.js';
import type { PgConnection } from './client.js';

/** One key for the audit chain's lock: appends are serialised across workers. */
const AUDIT_LOCK = 7_281_919;

/** Appends to the audit trail inside the caller's transaction (`tx`), chained to the last entry. */
export async function appendAuditIn(tx: PgConnection, entry: NewAuditEntry): Promise<void> {
  await tx.lockForTransaction(AUDIT_LOCK);
  const last = lastHashOr((await tx.first<{ hash: string }>(AUDIT_SQL.lastHash))?.hash);
  await tx.run(AUDIT_SQL.append, auditRow(last, entry).values);
}

export async function appendAudit(c: PgConnection, entry: NewAuditEntry): Promise<void> {
  await c.tx((tx) => appendAuditIn(tx, entry));
}
