/** Appending to the audit trail in SQLite: inside the caller's transaction, chained to the last entry. */
import type { NewAuditEntry } from '../../audit/chain.js';
import { AUDIT_SQL, auditRow, lastHashOr } from '../queries/audit.js';
import type { SqliteConnection } from './connection.js';

/** Appends an entry to the audit trail, chained to the last one; call inside a transaction (atomic()). */
export function appendAuditNow(c: SqliteConnection, entry: NewAuditEntry): void {
  // In a group commit the head is known after the first entry: the transaction holds the write lock, nothing else appends.
  // Outside a group it is always undefined (dropped as each group's transaction ends), so the trail is read.
  const last = c.groupAuditHead ?? lastHashOr(c.sql(AUDIT_SQL.lastHash).pluck().get() as string | undefined);
  const { hash, values } = auditRow(last, entry);
  c.sql(AUDIT_SQL.append).run(...values);
  if (c.inGroup) c.groupAuditHead = hash;
}

export async function appendAudit(c: SqliteConnection, entry: NewAuditEntry): Promise<void> {
  c.atomic(() => appendAuditNow(c, entry));
}
