/**
 * How a batch learned of its rows' state changes (by webhook, by polling, in an
 * answer), counted in PostgreSQL per connection (batch_learned, migration 18)
 * rather than on the batch's row: every commit that learned a change, by any
 * worker, waited for that one row until its own commit. A connection runs one
 * transaction at a time, so no commit waits for another's count. A batch's
 * counts are its row's (where earlier releases counted) plus every
 * connection's, added whenever a batch is read.
 */
import type { BatchRecord, ObservationSource, Store } from '../port.js';
import { CHANGE_COUNTER } from '../queries/pipeline.js';
import type { PgConnection } from './client.js';

/** Params: batch. One more change learned the `source` way, on this connection's own count. */
export const COUNT_LEARNED: Readonly<Record<ObservationSource, string>> = Object.fromEntries(
  Object.entries(CHANGE_COUNTER).map(([source, column]) => [source, `INSERT INTO batch_learned (batch_id, backend, ${column}) VALUES (?, pg_backend_pid(), 1)
    ON CONFLICT (batch_id, backend) DO UPDATE SET ${column} = batch_learned.${column} + 1`]),
) as Record<ObservationSource, string>;

interface Learned { batch_id: string; webhook: string; polling: string; answer: string }

const SUMS = `SELECT batch_id, SUM(changes_by_webhook)::text AS webhook, SUM(changes_by_polling)::text AS polling, SUM(changes_by_answer)::text AS answer
  FROM batch_learned WHERE batch_id = ANY(?::text[]) GROUP BY batch_id`;

/** The records with every connection's counts added to their own (in place); as given. */
export async function withLearned<T extends BatchRecord[]>(c: PgConnection, records: T): Promise<T> {
  if (records.length === 0) return records;
  const byBatch = new Map(records.map((record) => [record.id, record]));
  for (const sums of await c.all<Learned>(SUMS, [[...byBatch.keys()]])) {
    const record = byBatch.get(sums.batch_id) as BatchRecord;
    record.changes_by_webhook = Number(record.changes_by_webhook) + Number(sums.webhook);
    record.changes_by_polling = Number(record.changes_by_polling) + Number(sums.polling);
    record.changes_by_answer = Number(record.changes_by_answer) + Number(sums.answer);
  }
  return records;
}

/** One record (or none) with every connection's counts added. */
export async function oneWithLearned(c: PgConnection, record: BatchRecord | undefined): Promise<BatchRecord | undefined> {
  return record === undefined ? undefined : (await withLearned(c, [record]))[0];
}

type BatchReads = Pick<Store, 'batch' | 'recentBatches' | 'openBatches' | 'batchesInProcessing' | 'interruptedIntakes' | 'acceptedBatchWithContent' | 'endedBatchWithContent'>;

/** The store's reads of batches, each record with every connection's counts added: no record is read without them. */
export function readsWithLearned(c: PgConnection, reads: BatchReads): BatchReads {
  return {
    batch: async (id) => oneWithLearned(c, await reads.batch(id)),
    recentBatches: async (since) => withLearned(c, await reads.recentBatches(since)),
    openBatches: async () => withLearned(c, await reads.openBatches()),
    batchesInProcessing: async () => withLearned(c, await reads.batchesInProcessing()),
    interruptedIntakes: async () => withLearned(c, await reads.interruptedIntakes()),
    acceptedBatchWithContent: async (sha256) => oneWithLearned(c, await reads.acceptedBatchWithContent(sha256)),
    endedBatchWithContent: async (sha256, after) => oneWithLearned(c, await reads.endedBatchWithContent(sha256, after)),
  };
}
