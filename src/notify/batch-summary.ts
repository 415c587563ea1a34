/** A settled batch's counts for its notification, read from the store (the same tally as the run's summary). */
import { BatchTally } from '../reports/batch-tally.js';
import type { IntakeStore, PipelineStore } from '../store/port.js';
import type { BatchSummary } from './events.js';

export type SummaryStore = Pick<IntakeStore, 'batch'> & Pick<PipelineStore, 'resultRows'>;

export async function batchSummary(store: SummaryStore, batchId: string): Promise<BatchSummary | null> {
  const batch = await store.batch(batchId);
  if (!batch) return null;
  const tally = new BatchTally();
  for await (const row of store.resultRows(batchId)) tally.add(row);
  return { file: batch.file_name, rows: tally.rows, by_state: tally.byState, need_person: tally.needPerson, paid_out: tally.paidOut, funded: tally.funded };
}
