/**
 * A batch as the console shows it (its status, and its rows counted by the
 * state and the reason code a person filters on), made by walking its rows
 * once. A settled batch's view is made as it settles (settle.ts) and kept in
 * the store with what it was made from (its basis: settled when, and how many
 * state changes it learned by webhook, polling and answers), so that even the
 * first look at a batch of a million rows reads one record. It is used while
 * that basis stands: a row that changes after settlement (a refund learned, a
 * cancel) moves those counters, and the view is made again on the next look.
 * A batch not settled is walked on each view.
 */
import type { Clock } from '../clock.js';
import type { BatchStatus } from './status.js';
import { readStatus } from './status.js';
import { resultReason, resultState } from '../reports/results.js';
import type { AuditStore, BatchRecord, IntakeStore, PipelineStore, WebhookStore } from '../store/port.js';

export interface BatchView {
  status: BatchStatus;
  /** Every state and reason code of the batch with its count: the filter's choices and how many each lets through. */
  states: Record<string, number>;
  codes: Record<string, number>;
}

export type ViewStore = IntakeStore & PipelineStore & WebhookStore & AuditStore;

/** What a settled batch's view is made from; null for a batch not settled (never kept). */
export function viewBasis(record: BatchRecord): string | null {
  if (record.status !== 'settled') return null;
  return JSON.stringify([record.status, record.settled_at, record.changes_by_webhook, record.changes_by_polling, record.changes_by_answer, record.approval, record.rows_total]);
}

export async function batchView(store: ViewStore, clock: Clock, record: BatchRecord): Promise<BatchView | null> {
  const basis = viewBasis(record);
  if (basis !== null) {
    const kept = await store.keptBatchSummary(record.id);
    if (kept?.basis === basis) return JSON.parse(kept.summary) as BatchView;
  }
  const states: Record<string, number> = {};
  const codes: Record<string, number> = {};
  // Counted in the status's own walk of the rows: one walk, not two (a million rows as a batch settles).
  const status = (await readStatus(store, clock, record.id, [], (row) => {
    const state = resultState(row);
    states[state] = (states[state] ?? 0) + 1;
    const { code } = resultReason(row);
    if (code) codes[code] = (codes[code] ?? 0) + 1;
  })).batches[0];
  if (!status) return null;
  const summary: BatchView = { status, states, codes };
  if (basis !== null) await store.keepBatchSummary(record.id, basis, JSON.stringify(summary));
  return summary;
}
