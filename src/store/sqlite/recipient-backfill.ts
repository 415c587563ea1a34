/** SQLite's run of the recipient backfill (queries/recipient-backfill.ts): synchronous, at open, one transaction a page. */
import * as q from '../queries/recipient-backfill.js';
import type { SqliteDatabase } from './database.js';
import { chunkStarts, sortedEntries } from './payments-in-order.js';

/** Fills the recipient accounts of rows stored before they were kept; once per database. Returns the rows given one. */
export function backfillRecipientsSqlite(db: SqliteDatabase, now: () => Date = () => new Date()): number {
  if (db.prepare(q.BACKFILL_DONE).get(q.BACKFILL_NAME) !== undefined) return 0;
  const read = db.prepare(q.PAGE_WITHOUT_ENTRY);
  let after: [string, number] = ['', 0];
  let filled = 0;
  for (;;) {
    const page = read.all(...after) as q.StoredRequest[];
    if (page.length === 0) break;
    const { params, count } = q.entriesOfPage(page);
    if (count > 0) {
      const [byLine, byPayment] = q.insertEntriesStatements(count);
      filled += db.transaction(() => {
        const { changes } = db.prepare(byLine).run(...params);
        db.prepare(byPayment).run(...params);
        return changes;
      })();
    }
    after = q.pageEnd(page);
  }
  db.prepare(q.MARK_DONE).run(q.BACKFILL_NAME, now().toISOString());
  return filled;
}

/**
 * Fills recipient_payments from the entries by line kept before it (queries/recipient-backfill.ts), once per
 * database, sorted and a chunk a transaction (payments-in-order.ts). Returns the entries written.
 */
export function backfillPaymentsSqlite(db: SqliteDatabase, now: () => Date = () => new Date()): number {
  if (db.prepare(q.BACKFILL_DONE).get(q.PAYMENTS_BACKFILL_NAME) !== undefined) return 0;
  const sorted = sortedEntries(db, null);
  try {
    for (const after of chunkStarts(sorted.count)) sorted.writeChunk(after);
  } finally {
    sorted.drop();
  }
  db.prepare(q.MARK_DONE).run(q.PAYMENTS_BACKFILL_NAME, now().toISOString());
  return sorted.count;
}
