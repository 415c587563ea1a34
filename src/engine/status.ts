/**
 * `paybatch status`: where every open and recent batch stands, read from the
 * store alone (no call to the service, no lock: it can run beside `watch`).
 */
import type { Clock } from '../clock.js';
import { BatchTally } from '../reports/batch-tally.js';
import type { IntakeStore, PipelineStore, WebhookEventCounts, WebhookStore } from '../store/store.js';

export interface BatchStatus {
  batch: string;
  file: string;
  status: string;
  received_at: string;
  settled_at: string | null;
  rows: number;
  by_state: Record<string, number>;
  funded: Record<string, string>;
  paid_out: Record<string, string>;
  unsettled: number;
  /** How the batch learned of its state changes [1]: webhooks first, polling as the fallback. */
  learned: { webhook: number; polling: number; answer: number };
}

export interface StatusReport {
  batches: BatchStatus[];
  webhook_events: WebhookEventCounts;
}

const RECENT_MS = 7 * 24 * 3_600_000;

export async function readStatus(store: IntakeStore & PipelineStore & WebhookStore, clock: Clock, only?: string): Promise<StatusReport> {
  const records = only ? [await store.batch(only)].filter((b) => b !== undefined) : await store.recentBatches(new Date(clock.now() - RECENT_MS).toISOString());
  const batches: BatchStatus[] = [];
  for (const record of records) {
    const tally = new BatchTally();
    for await (const row of store.resultRows(record.id)) tally.add(row);
    batches.push({
      batch: record.id,
      file: record.file_name,
      status: record.status,
      received_at: record.received_at,
      settled_at: record.settled_at,
      rows: tally.rows,
      by_state: tally.byState,
      funded: tally.funded,
      paid_out: tally.paidOut,
      unsettled: await store.unsettledRows(record.id),
      learned: { webhook: record.changes_by_webhook, polling: record.changes_by_polling, answer: record.changes_by_answer },
    });
  }
  return { batches, webhook_events: await store.webhookEventCounts() };
}

export function renderStatus(report: StatusReport): string {
  const lines: string[] = [];
  for (const b of report.batches) {
    lines.push(`${b.batch}  ${b.file}  ${b.status}${b.unsettled > 0 ? `, ${b.unsettled} in flight` : ''}  (received ${b.received_at}${b.settled_at ? `, settled ${b.settled_at}` : ''})`);
    lines.push(`  ${b.rows} rows: ${Object.entries(b.by_state).map(([state, n]) => `${state} ${n}`).join(', ') || 'none'}`);
    const money = [
      ...Object.entries(b.funded).map(([c, v]) => `funded ${v} ${c}`),
      ...Object.entries(b.paid_out).map(([c, v]) => `paid out ${v} ${c}`),
    ];
    if (money.length > 0) lines.push(`  ${money.join(', ')} (minor units)`);
    lines.push(`  state changes learned: ${b.learned.webhook} by webhook, ${b.learned.polling} by polling, ${b.learned.answer} in answers to paybatch's calls`);
  }
  if (report.batches.length === 0) lines.push('no open or recent batch');
  const w = report.webhook_events;
  lines.push(`webhook events: ${w.received} received, ${w.pending} waiting to be applied${Object.keys(w.outcomes).length > 0 ? ` (${Object.entries(w.outcomes).map(([o, n]) => `${o} ${n}`).join(', ')})` : ''}`);
  return `${lines.join('\n')}\n`;
}
