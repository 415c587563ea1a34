/**
 * Appending to the audit trail in PostgreSQL: inside the caller's transaction,
 * chained to the last entry, serialised across workers by an advisory lock
 * held to the commit. The database chains the entry itself, in one call
 * (paybatch_append_audit, migration 18), so that the lock is held for one
 * round trip and the commit, not three; the hash it made is checked here
 * against chain.ts before the transaction goes on.
 */
import type { NewAuditEntry } from '../../audit/chain.js';
import { AUDIT_VERSION, GENESIS, canonicalJson, encodedAround, entryHash } from '../../audit/chain.js';
import { entryBatch } from '../../audit/entry-batch.js';
import type { PgConnection } from './client.js';

/** One key for the audit chain's lock: appends are serialised across workers (the same key as every earlier release). */
const AUDIT_LOCK = 7_281_919;

const APPEND = 'SELECT prev_hash, hash FROM paybatch_append_audit(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';

/** Appends to the audit trail inside the caller's transaction (`tx`), chained to the last entry. */
export async function appendAuditIn(tx: PgConnection, entry: NewAuditEntry): Promise<void> {
  const stored = { at: entry.at, actor: entry.actor, action: entry.action, subject: entry.subject, details: canonicalJson(entry.details) };
  const { before, after } = encodedAround(stored);
  const made = await tx.first<{ prev_hash: string; hash: string }>(APPEND, [
    AUDIT_LOCK, GENESIS, AUDIT_VERSION, stored.at, stored.actor, stored.action, stored.subject, stored.details, entryBatch(stored.subject, stored.details), before, after,
  ]);
  // The database hashed the bytes it was given; chain.ts is the rule `audit verify` holds the entry to. Never kept
  // unless the two agree (the transaction is rolled back).
  if (!made || made.hash !== entryHash(made.prev_hash, stored, AUDIT_VERSION)) {
    throw new Error(`the audit entry PostgreSQL chained (${stored.action}, ${stored.subject}) does not hash as paybatch hashes it: nothing was changed`);
  }
}

export async function appendAudit(c: PgConnection, entry: NewAuditEntry): Promise<void> {
  await c.tx((tx) => appendAuditIn(tx, entry));
}
