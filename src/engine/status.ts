/**
 * `paybatch status`: where every open and recent batch stands, read from the
 * store alone (no call to the service, no lock: it can run beside `watch`).
 */
import type { Clock } from '../clock.js';
import { BatchTally } from '../reports/batch-tally.js';
import { REFUSAL_OUTCOMES } from '../payout-states.js';
import { resultReason } from '../reports/results.js';
import type { ApprovalStore, IntakeStore, NextRead, PipelineStore, ResultRow, SharedWorkStore, WebhookEventCounts, WebhookStore } from '../store/port.js';
import { DUPLICATE_HOLD, isAttentionState, isCancelGivenUp } from '../payout-states.js';
import { formatMoneyMap } from '../validate/money.js';
import type { BatchStage } from './batch-stage.js';
import { clockTime, stageWords } from './batch-stage.js';
import { readBatchStage } from './stage-facts.js';
import { adviceFor } from '../reports/advice.js';

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
  /** How long the oldest row not final yet has been waiting (sent or not), in seconds; null when none is. */
  oldest_unsettled_age_s: number | null;
  /** Where the batch is (see batch-stage.ts), and the same in words. */
  stage: BatchStage;
  stage_words: string;
  /** Rows in flight at the service (their transaction exists there); rows never sent are never counted here. */
  in_flight: number;
  /** How long the oldest row in flight at the service has been there, in seconds; null when none is. */
  oldest_in_flight_age_s: number | null;
  /** Rows a person should look at: attention states, held rows (an answer that did not match), and paybatch's refusals. */
  attention: AttentionRow[];
  /** Rows paybatch refused or held, by reason code. */
  by_reason: Record<string, number>;
  /** When each unsettled row is next read, soonest first (the first 20 in text, all in JSON for one batch). */
  next_reads: NextReadAt[];
  /** Where its approval stands (null when approvals were off at intake), and why. */
  approval: string | null;
  approval_reason: string | null;
  /** A corrections batch: the batch whose rows it pays again. */
  corrects: string | null;
  /** How the batch learned of its state changes [1]: webhooks first, polling as the fallback. */
  learned: { webhook: number; polling: number; answer: number };
}

export interface NextReadAt extends Omit<NextRead, 'next_read_at'> {
  /** ISO 8601; null while a call on the row is under way (being sent, created or funded). */
  next_read_at: string | null;
}

export interface AttentionRow {
  line: number;
  external_id: string | null;
  transaction_id: string | null;
  state: string;
  state_reason: string | null;
  state_reason_code: string | null;
  /** What a person should do, by its state (advice.ts): never to pay again what may still pay out. */
  action: string;
}

/** A worker sharing the database (PostgreSQL), as its lease and claims stand. */
export interface WorkerStatus {
  name: string;
  host: string;
  pid: number;
  alive: boolean;
  /** ISO 8601 */
  renewed_at: string;
  rows_held: number;
  call_slots_held: number;
}

export interface StatusReport {
  batches: BatchStatus[];
  webhook_events: WebhookEventCounts;
  /** With several workers on PostgreSQL: each, alive or not. */
  workers?: WorkerStatus[];
}

export const RECENT_MS = 7 * 24 * 3_600_000;
/** Next reads listed per batch when all batches are shown; one batch lists them all. */
const NEXT_READS_PER_BATCH = 20;

/** The workers of a shared database, for status. */
export async function readWorkers(shared: SharedWorkStore, clock: Clock): Promise<WorkerStatus[]> {
  const now = clock.now();
  return Promise.all((await shared.workers()).map(async (w) => {
    const held = await shared.heldBy(w.name);
    return { name: w.name, host: w.host, pid: w.pid, alive: w.expires_at > now, renewed_at: new Date(w.renewed_at).toISOString(), rows_held: held.rows, call_slots_held: held.slots };
  }));
}

/**
 * `approvers`: who may approve under the configuration's policy, named in a stage awaiting approval. `eachRow`: told
 * every row as it is read, for a caller that counts more than the status does (batch-view.ts) without a second walk.
 */
export async function readStatus(
  store: IntakeStore & PipelineStore & WebhookStore & Partial<Pick<ApprovalStore, 'approvalsOf'>>, clock: Clock, only?: string, approvers: readonly string[] = [], eachRow?: (row: ResultRow) => void,
): Promise<StatusReport> {
  const records = only ? [await store.batch(only)].filter((b) => b !== undefined) : await store.recentBatches(new Date(clock.now() - RECENT_MS).toISOString());
  const batches: BatchStatus[] = [];
  for (const record of records) {
    const tally = new BatchTally();
    const attention: AttentionRow[] = [];
    for await (const row of store.resultRows(record.id)) {
      eachRow?.(row);
      tally.add(row);
      const refused = row.outcome !== null && REFUSAL_OUTCOMES.has(row.outcome);
      if (isAttentionState(row.state) || refused || row.phase === 'held' || row.phase === DUPLICATE_HOLD || isCancelGivenUp(row)) {
        const { reason, code } = resultReason(row);
        attention.push({
          line: row.line, external_id: row.external_id, transaction_id: row.transaction_id, state: row.phase === 'held' ? (row.outcome ?? 'held') : (row.state ?? row.outcome ?? ''),
          state_reason: reason || null, state_reason_code: code || null, action: adviceFor({ ...row, batch_id: record.id }),
        });
      }
    }
    const { stage, progress } = await readBatchStage(store, record, clock.now(), approvers);
    const next = progress.unsettled > 0 ? await store.nextReads(record.id, only ? progress.unsettled : NEXT_READS_PER_BATCH) : [];
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
      unsettled: progress.unsettled,
      oldest_unsettled_age_s: progress.oldest_unsettled_at === null ? null : Math.max(0, Math.floor((clock.now() - Date.parse(progress.oldest_unsettled_at)) / 1000)),
      stage,
      stage_words: stageWords(stage),
      in_flight: progress.at_service,
      oldest_in_flight_age_s: ageSeconds(progress.oldest_in_flight_at, clock.now()),
      attention,
      approval: record.approval,
      approval_reason: record.approval_reason,
      corrects: record.corrects_batch ?? null,
      by_reason: tally.byReason,
      next_reads: next.map((r) => ({ ...r, next_read_at: r.next_read_at === null ? null : new Date(r.next_read_at).toISOString() })),
      learned: { webhook: record.changes_by_webhook, polling: record.changes_by_polling, answer: record.changes_by_answer },
    });
  }
  return { batches, webhook_events: await store.webhookEventCounts() };
}

const ATTENTION_SHOWN = 20;

const ageSeconds = (since: string | null, now: number): number | null => (since === null ? null : Math.max(0, Math.floor((now - Date.parse(since)) / 1000)));

export function formatAge(seconds: number): string {
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

/** "in 3m", "due now", "not sent yet": when a row is next read, for people; a row not at the service is not read. */
function whenNext(row: NextReadAt, now: number): string {
  if (row.phase === 'ready') return 'not sent yet';
  if (row.phase === 'creating') return 'being sent (its create call is under way)';
  if (row.next_read_at === null) return 'a call is under way';
  const seconds = Math.round((Date.parse(row.next_read_at) - now) / 1000);
  return seconds <= 0 ? 'due now' : `in ${formatAge(seconds)} (${clockTime(row.next_read_at)}, ${row.next_read_at})`;
}

export function renderStatus(report: StatusReport, now: number = Date.now()): string {
  const lines: string[] = [];
  for (const b of report.batches) {
    const age = b.oldest_in_flight_age_s === null || b.stage.kind !== 'in_flight' ? '' : ` (the oldest for ${formatAge(b.oldest_in_flight_age_s)})`;
    lines.push(`${b.batch}  ${b.file}  ${b.status}  (received ${b.received_at}${b.settled_at ? `, settled ${b.settled_at}` : ''})`);
    lines.push(`  ${b.stage_words}${age}`);
    if (b.corrects) lines.push(`  corrections of batch ${b.corrects}`);
    lines.push(`  ${b.rows} rows: ${Object.entries(b.by_state).map(([state, n]) => `${state} ${n}`).join(', ') || 'none'}`);
    const money = [
      ...(Object.keys(b.funded).length > 0 ? [`funded ${formatMoneyMap(b.funded)}`] : []),
      ...(Object.keys(b.paid_out).length > 0 ? [`paid out ${formatMoneyMap(b.paid_out)}`] : []),
    ];
    if (money.length > 0) lines.push(`  ${money.join('; ')}`);
    if (b.attention.length > 0) {
      lines.push(`  needs attention: ${b.attention.length}`);
      for (const a of b.attention.slice(0, ATTENTION_SHOWN)) {
        lines.push(`    line ${a.line}  ${a.external_id ?? ''}  ${a.state}${a.state_reason_code ? `  ${a.state_reason_code}` : ''}${a.state_reason ? `: ${a.state_reason}` : ''}`);
        lines.push(`      what to do: ${a.action}`);
      }
      if (b.attention.length > ATTENTION_SHOWN) lines.push(`    ... and ${b.attention.length - ATTENTION_SHOWN} more (--json lists them all)`);
    }
    if (b.approval) lines.push(`  approval: ${b.approval}${b.approval_reason ? ` (${b.approval_reason})` : ''}${b.approval === 'awaiting' ? `: paybatch preview ${b.batch}` : ''}`);
    const reasons = Object.entries(b.by_reason).map(([reason, n]) => `${reason} ${n}`).join(', ');
    if (reasons) lines.push(`  refused or held by paybatch: ${reasons}`);
    // Rows listed only while something of the batch is under way: a batch awaiting approval has nothing to read.
    if (b.next_reads.length > 0 && (b.stage.kind === 'in_flight' || b.stage.kind === 'sending' || b.stage.kind === 'held')) {
      lines.push(`  next reads (${b.in_flight} rows in flight at the service${b.unsettled > b.in_flight ? `, ${b.unsettled - b.in_flight} not there yet` : ''}):`);
      for (const r of b.next_reads.slice(0, ATTENTION_SHOWN)) lines.push(`    line ${r.line}  ${r.external_id}  ${r.state ?? r.phase}  ${r.phase === DUPLICATE_HOLD ? 'not sent: waits for a person (paybatch allow, or paybatch cancel)' : whenNext(r, now)}`);
      if (b.unsettled > ATTENTION_SHOWN) lines.push(`    ... and ${b.unsettled - ATTENTION_SHOWN} more (paybatch status ${b.batch} --json lists them all)`);
    }
    lines.push(`  state changes learned: ${b.learned.webhook} by webhook, ${b.learned.polling} by polling, ${b.learned.answer} in answers to paybatch's calls`);
  }
  if (report.batches.length === 0) lines.push('no open or recent batch');
  const w = report.webhook_events;
  lines.push(`webhook events: ${w.received} received, ${w.pending} waiting to be applied${Object.keys(w.outcomes).length > 0 ? ` (${Object.entries(w.outcomes).map(([o, n]) => `${o} ${n}`).join(', ')})` : ''}`);
  for (const worker of report.workers ?? []) {
    const renewed = formatAge(Math.max(0, Math.round((now - Date.parse(worker.renewed_at)) / 1000)));
    lines.push(`worker ${worker.name}  ${worker.alive ? 'alive' : 'gone'}  (process ${worker.pid} on ${worker.host}, last heard ${renewed} ago)${worker.alive ? `  holds ${worker.rows_held} rows, ${worker.call_slots_held} call slots` : ''}`);
  }
  return `${lines.join('\n')}\n`;
}
