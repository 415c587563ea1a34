/**
 * SQLite's own part of the possible-duplicate queries: the writes of several
 * statements, run synchronously inside c.atomic, with the statements written
 * once in queries/duplicates.ts.
 */
import type { NewAuditEntry } from '../../audit/chain.js';
import type { Allowance, RecipientEntry } from '../port.js';
import type { Finding } from '../queries/duplicates.js';
import * as q from '../queries/duplicates.js';
import type { SqliteConnection } from './connection.js';

/** Call inside a transaction. */
export function recordRecipientsSqlite(c: SqliteConnection, batchId: string, entries: readonly RecipientEntry[]): void {
  const full = c.sql(q.recordRecipientsStatement(q.RECIPIENTS_PER_STATEMENT));
  const one = c.sql(q.recordRecipientsStatement(1));
  let at = 0;
  for (; at + q.RECIPIENTS_PER_STATEMENT <= entries.length; at += q.RECIPIENTS_PER_STATEMENT) {
    full.run(...q.recipientParams(batchId, entries.slice(at, at + q.RECIPIENTS_PER_STATEMENT)));
  }
  // The rest one by one: one compiled statement, not one for each size of a last chunk.
  for (; at < entries.length; at++) one.run(...q.recipientParams(batchId, entries.slice(at, at + 1)));
}

/**
 * Entries by payment written per transaction. Written in payment order, each chunk touches the pages of its stretch
 * of the table once; each transaction's pages go through the write-ahead log, which stays small (under 64 MB) only
 * if each is bounded: 5,000 entries are at most 5,000 pages where every one lands on a page of its own (a long
 * history), some 80 where the table holds little else.
 */
const PAYMENTS_PER_TRANSACTION = 5000;

/**
 * A batch's entries by payment (DuplicateStore.indexRecipients): sorted by SQLite into a temporary table (its own
 * file, outside the write-ahead log), then written in that order a chunk a transaction, the event loop let run in
 * between. Written row by row as the rows were stored, each entry landed on a page of its own, and each commit of
 * 250 rows wrote some 250 pages of this table again (12.3 s of a million-row intake, docs/performance.md).
 */
export async function indexRecipientsSqlite(c: SqliteConnection, batchId: string): Promise<void> {
  // Statements on the temporary table are compiled for this batch only: the table is dropped at the end.
  c.db.prepare('DROP TABLE IF EXISTS temp.recipients_in_order').run();
  c.db.prepare('CREATE TEMP TABLE recipients_in_order (recipient_key TEXT, currency TEXT, amount TEXT, line INTEGER)').run();
  // The temporary database's page cache as small as the main one's (database.ts): SQLite's built default is 16 MB,
  // which a million entries (some 60 MB) would fill, all of it in the process's memory.
  c.db.pragma('temp.cache_size = -2000');
  try {
    // Rowids follow the order of insertion: the order of payment.
    const sorted = c.db.prepare(`INSERT INTO temp.recipients_in_order SELECT recipient_key, currency, amount, line FROM row_recipients
      WHERE batch_id = ? ORDER BY recipient_key, currency, amount, line`).run(batchId);
    const write = c.db.prepare(`INSERT INTO recipient_payments (recipient_key, currency, amount, batch_id, line)
      SELECT recipient_key, currency, amount, ?, line FROM temp.recipients_in_order WHERE rowid > ? AND rowid <= ? ORDER BY rowid
      ON CONFLICT DO NOTHING`);
    for (let after = 0; after < sorted.changes; after += PAYMENTS_PER_TRANSACTION) {
      c.atomic(() => write.run(batchId, after, after + PAYMENTS_PER_TRANSACTION));
      // Answers, webhooks and the engine's commits go on between chunks.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  } finally {
    if (c.db.open) c.db.prepare('DROP TABLE IF EXISTS temp.recipients_in_order').run();
  }
}

/** Call inside a transaction: the findings kept, and each `hold` row still ready moved to duplicate_hold. */
export function recordPossibleDuplicatesSqlite(c: SqliteConnection, found: readonly Finding[]): void {
  // One finding to a statement: in process, a statement costs no round trip, and two compiled statements serve all.
  for (const write of q.findingWrites(found, 1)) c.sql(write.sql).run(...write.params);
}

/** Call inside a transaction; `audit` appends to the trail in it. */
export function allowDuplicateSqlite(c: SqliteConnection, batchId: string, line: number, allowance: Allowance, audit: (entry: NewAuditEntry) => void): boolean {
  if (c.sql(q.RELEASE_HELD).run(batchId, line).changes === 0) return false;
  const found = c.sql(q.RECORD_ALLOWANCE).get(...q.allowanceParams(batchId, line, allowance)) as Parameters<typeof q.allowanceEntry>[3];
  audit(q.allowanceEntry(batchId, line, allowance, found));
  return true;
}
