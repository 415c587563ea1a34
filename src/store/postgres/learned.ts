/**
 * How a batch learned of its rows' state changes (by webhook, by polling, in an
 * answer), counted in PostgreSQL per connection (batch_learned, migration 18)
 * rather than on the batch's row: every commit that learned a change, by any
 * worker, waited for that one row until its own commit. A connection runs one
 * transaction at a time, so no commit waits for another's count. A batch's
 * counts are its row's (where earlier releases counted) plus every
 * connection's, added whenever a batch is read, and moved onto its row once it
 * is settled.
 */
import type { BatchRecord, ObservationSource, Store } from '../port.js';
import { CHANGE_COUNTER, settleBatch } from '../queries/pipeline.js';
import type { PgConnection } from './client.js';

/** Params: batch. One more change learned the `source` way, on this connection's own count. */
export const COUNT_LEARNED: Readonly<Record<ObservationSource, string>> = Object.fromEntries(
  Object.entries(CHANGE_COUNTER).map(([source, column]) => [source, `INSERT INTO batch_learned (batch_id, backend, ${column}) VALUES (?, pg_backend_pid(), 1)
    ON CONFLICT (batch_id, backend) DO UPDATE SET ${column} = batch_learned.${column} + 1`]),
) as Record<ObservationSource, string>;

interface Totals { id: string; webhook: number; polling: number; answer: number }

/** Params: batches. Each batch's counts, its row's and every connection's, read in one statement (one snapshot: a fold at settlement, below, is seen whole or not at all). */
const TOTALS = `SELECT b.id, b.changes_by_webhook + COALESCE(SUM(l.changes_by_webhook), 0)::int AS webhook,
    b.changes_by_polling + COALESCE(SUM(l.changes_by_polling), 0)::int AS polling, b.changes_by_answer + COALESCE(SUM(l.changes_by_answer), 0)::int AS answer
  FROM batches b LEFT JOIN batch_learned l ON l.batch_id = b.id WHERE b.id = ANY(?::text[]) GROUP BY b.id`;

/**
 * Param: batch. A settled batch's counts moved onto its row, and its connections' counts gone: the rows of counts
 * stay a few a batch under way, however many connections came and went. A count made meanwhile is either folded or
 * kept (the DELETE waits for it), never lost or counted twice.
 */
export const FOLD_LEARNED = `WITH gone AS (DELETE FROM batch_learned WHERE batch_id = ? RETURNING changes_by_webhook, changes_by_polling, changes_by_answer)
  UPDATE batches SET changes_by_webhook = changes_by_webhook + (SELECT COALESCE(SUM(changes_by_webhook), 0) FROM gone),
    changes_by_polling = changes_by_polling + (SELECT COALESCE(SUM(changes_by_polling), 0) FROM gone),
    changes_by_answer = changes_by_answer + (SELECT COALESCE(SUM(changes_by_answer), 0) FROM gone) WHERE id = ?`;

/** The records with their counts as every connection counted them (in place); as given. */
export async function withLearned<T extends BatchRecord[]>(c: PgConnection, records: T): Promise<T> {
  if (records.length === 0) return records;
  const byBatch = new Map(records.map((record) => [record.id, record]));
  for (const totals of await c.all<Totals>(TOTALS, [[...byBatch.keys()]])) {
    const record = byBatch.get(totals.id) as BatchRecord;
    record.changes_by_webhook = totals.webhook;
    record.changes_by_polling = totals.polling;
    record.changes_by_answer = totals.answer;
  }
  return records;
}

/** One record (or none) with every connection's counts added. */
export async function oneWithLearned(c: PgConnection, record: BatchRecord | undefined): Promise<BatchRecord | undefined> {
  return record === undefined ? undefined : (await withLearned(c, [record]))[0];
}

type BatchReads = Pick<Store, 'batch' | 'recentBatches' | 'openBatches' | 'batchesInProcessing' | 'interruptedIntakes' | 'acceptedBatchWithContent' | 'endedBatchWithContent'>;

/** The store's reads of batches, each record with every connection's counts added: no record is read without them; and settling, which folds them. */
export function readsWithLearned(c: PgConnection, reads: BatchReads): BatchReads & Pick<Store, 'settleBatch'> {
  return {
    batch: async (id) => oneWithLearned(c, await reads.batch(id)),
    recentBatches: async (since) => withLearned(c, await reads.recentBatches(since)),
    openBatches: async () => withLearned(c, await reads.openBatches()),
    batchesInProcessing: async () => withLearned(c, await reads.batchesInProcessing()),
    interruptedIntakes: async () => withLearned(c, await reads.interruptedIntakes()),
    acceptedBatchWithContent: async (sha256) => oneWithLearned(c, await reads.acceptedBatchWithContent(sha256)),
    endedBatchWithContent: async (sha256, after) => oneWithLearned(c, await reads.endedBatchWithContent(sha256, after)),
    // Settled and its counts folded in one transaction.
    settleBatch: (batchId, at) => c.tx(async (tx) => {
      await settleBatch(tx, batchId, at);
      await tx.run(FOLD_LEARNED, [batchId, batchId]);
    }),
  };
}
