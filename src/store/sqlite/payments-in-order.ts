/**
 * Recipient entries written by payment in that order (recipient_payments): a
 * batch's once its rows are all stored (DuplicateStore.indexRecipients), or
 * every batch's once, when a database made before the table is first opened.
 * SQLite sorts them into a temporary table (a file of its own beside the
 * database, outside the write-ahead log), and they are written from it a chunk
 * a transaction. Written row by row as the rows were stored, each entry landed
 * on a page of its own, and each commit of 250 rows wrote some 250 pages of the
 * table again (12.3 s of a million-row intake, docs/performance.md).
 */
import type { SqliteDatabase } from './database.js';

/**
 * Entries written per transaction. Each transaction's pages go through the write-ahead log, which stays small (under
 * 64 MB) only if each is bounded: 5,000 entries are at most 5,000 pages where every one lands on a page of its own (a
 * long history), some 80 where the table holds little else.
 */
const PER_TRANSACTION = 5000;

/** Temporary tables made by this process: each sort its own, so that two intakes on one connection never share one. */
let made = 0;

export interface SortedEntries {
  /** How many there are to write. */
  readonly count: number;
  /** Writes the chunk after the first `after`, in one transaction; never over an entry already there. */
  writeChunk(after: number): void;
  /** The temporary table dropped. */
  drop(): void;
}

/** A batch's entries (or, with null, every batch's) sorted by payment, ready to be written a chunk at a time. */
export function sortedEntries(db: SqliteDatabase, batchId: string | null): SortedEntries {
  made += 1;
  const name = `payments_in_order_${made}`;
  const table = `temp.${name}`;
  db.prepare(`CREATE TEMP TABLE ${name} (recipient_key TEXT, currency TEXT, amount TEXT, batch_id TEXT, line INTEGER)`).run();
  // The temporary database's page cache as small as the main one's (database.ts): SQLite's built default is 16 MB,
  // which a million entries (some 70 MB) would fill, all of it in the process's memory.
  db.pragma('temp.cache_size = -2000');
  const drop = (): void => {
    if (db.open) db.prepare(`DROP TABLE IF EXISTS ${table}`).run();
  };
  try {
    // Rowids follow the order of insertion: the order of payment.
    const which = batchId === null ? '' : 'WHERE batch_id = ?';
    const { changes } = db.prepare(`INSERT INTO ${table} SELECT recipient_key, currency, amount, batch_id, line FROM row_recipients ${which}
      ORDER BY recipient_key, currency, amount, batch_id, line`).run(...(batchId === null ? [] : [batchId]));
    const write = db.prepare(`INSERT INTO recipient_payments (recipient_key, currency, amount, batch_id, line)
      SELECT recipient_key, currency, amount, batch_id, line FROM ${table} WHERE rowid > ? AND rowid <= ? ORDER BY rowid
      ON CONFLICT DO NOTHING`);
    const inTransaction = db.transaction((after: number) => write.run(after, after + PER_TRANSACTION)).immediate;
    return { count: changes, writeChunk: (after) => inTransaction(after), drop };
  } catch (error) {
    drop();
    throw error;
  }
}

/** Where each chunk starts: 0, then every PER_TRANSACTION up to `count`. */
export function* chunkStarts(count: number): Generator<number> {
  for (let after = 0; after < count; after += PER_TRANSACTION) yield after;
}
