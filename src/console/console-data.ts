/**
 * What the console's pages show, read from the store and the workspace alone:
 * no call to the service, so a page never waits on it and the console can run
 * where only the database is. Figures stay in minor units here; the views turn
 * them into major units with their currency.
 */
import { adviceFor } from '../reports/advice.js';
import { readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { verdictFromFields, verdictTone } from '../reports/reconciliation-verdict.js';
import type { AuditEntry } from '../audit/chain.js';
import type { KeptChain } from './audit-kept.js';
import { extendVerification } from './audit-kept.js';
import type { Clock } from '../clock.js';
import type { BatchStatus } from '../engine/status.js';
import { RECENT_MS } from '../engine/status.js';
import type { BatchView } from '../engine/batch-view.js';
import { batchView } from '../engine/batch-view.js';
import { DUPLICATE_HOLD, FOLLOWED_PHASES, isAttentionState, isCancelGivenUp } from '../payout-states.js';
import type { ResultRow } from '../store/port.js';
import { resultReason, resultState } from '../reports/results.js';
import type { AuditPageFilter, AuditStore, IntakeStore, PipelineStore, WebhookStore } from '../store/port.js';
import type { Workspace } from '../workspace/workspace.js';

export type ConsoleReadStore = IntakeStore & PipelineStore & WebhookStore & AuditStore;

/** Batches of the last week, those awaiting approval first, then the newest; a settled batch's summary as kept. */
export async function batchList(store: ConsoleReadStore, clock: Clock): Promise<BatchStatus[]> {
  const records = await store.recentBatches(new Date(clock.now() - RECENT_MS).toISOString());
  const batches: BatchStatus[] = [];
  for (const record of records) {
    const summary = await batchView(store, clock, record);
    if (summary) batches.push(summary.status);
  }
  const waiting = (b: BatchStatus): number => (b.approval === 'awaiting' ? 0 : 1);
  return batches.sort((a, b) => waiting(a) - waiting(b) || (a.received_at < b.received_at ? 1 : a.received_at > b.received_at ? -1 : 0));
}

export async function batchStatus(store: ConsoleReadStore, clock: Clock, id: string): Promise<BatchView | null> {
  const record = await store.batch(id);
  return record ? batchView(store, clock, record) : null;
}

/** A row as a person reads it: the state and reason of its result file. */
export interface ShownRow {
  line: number;
  external_id: string;
  transaction_id: string;
  state: string;
  reason: string;
  code: string;
  input_amount: string | null;
  input_currency: string | null;
  output_amount: string | null;
  output_currency: string | null;
  /** The input amount was debited (the row was funded); a refund later credits it back. */
  funded: boolean;
}

export interface RowFilter {
  state?: string;
  reason?: string;
}

const shown = (row: ResultRow): ShownRow => {
  const { reason, code } = resultReason(row);
  return {
    line: row.line, external_id: row.external_id ?? '', transaction_id: row.transaction_id ?? '', state: resultState(row), reason, code,
    input_amount: row.input_amount, input_currency: row.input_currency, output_amount: row.output_amount, output_currency: row.output_currency,
    funded: row.funded_at !== null,
  };
};

export interface RowPage {
  rows: ShownRow[];
  /** Rows matching the filter, in all (from the batch's counts); null for a state and a reason together (not counted). */
  matching: number | null;
  /** Every state and reason code of the batch with its count, for the filter's choices. */
  states: Record<string, number>;
  codes: Record<string, number>;
  /** The line the next page goes on after; null when no row is left. */
  next: number | null;
}

/** Rows a view looks at, at most, for one page of a filter: a rare state answers with what it found and a link on. */
const SCAN_ROWS = 5_000;

/** One page of a batch's rows after a line (a keyset), filtered by state and reason code, in input order. */
export async function batchRows(store: ConsoleReadStore, summary: BatchView, filter: RowFilter, after: number, limit: number): Promise<RowPage> {
  const { states, codes } = summary;
  const matching = filter.state && filter.reason ? null : filter.state ? states[filter.state] ?? 0 : filter.reason ? codes[filter.reason] ?? 0 : summary.status.rows;
  const page: RowPage = { rows: [], matching, states, codes, next: null };
  let scanned = 0;
  for await (const result of store.resultRows(summary.status.batch, after)) {
    scanned += 1;
    const row = shown(result);
    if (!(filter.state && row.state !== filter.state) && !(filter.reason && row.code !== filter.reason)) {
      if (page.rows.length === limit) {
        page.next = (page.rows[page.rows.length - 1] as ShownRow).line;
        break;
      }
      page.rows.push(row);
    }
    if (scanned >= SCAN_ROWS && page.rows.length < limit) {
      page.next = row.line;
      break;
    }
  }
  return page;
}

/** A row that needs a person, with how long it has been so and what to do. */
export interface AttentionItem {
  batch: string;
  line: number;
  external_id: string;
  transaction_id: string | null;
  state: string;
  /** The service's reason (or, for a held row, the fields that did not match). */
  reason: string;
  code: string;
  output_amount: string | null;
  output_currency: string | null;
  /** Seconds since the service last changed the row's state (or paybatch last heard of it). */
  age_s: number;
  action: string;
  cancellable: boolean;
  /** Why it may not be cancelled from here, when it may not: a cancellation under way, or the service's may_cancel false. */
  not_cancellable: string | null;
}

/** Whether the console offers a row's cancel, and if not, why (the service's may_cancel as last seen decides for it). */
function cancelOffer(r: { phase: string; transaction_id: string | null; may_cancel?: boolean | null }): string | null {
  if (r.phase === DUPLICATE_HOLD) return null;
  if (r.phase === 'cancelling') return 'a cancellation is under way';
  if (r.transaction_id === null) return 'not at the service';
  if (r.may_cancel === false) return 'the service does not let it be cancelled now (may_cancel false)';
  return null;
}

export async function attentionRows(store: ConsoleReadStore, clock: Clock): Promise<AttentionItem[]> {
  // Rows held as possible duplicates too: each listed with its earlier twin (in its reason), to allow or cancel.
  const rows = await store.allRowsInPhases([...FOLLOWED_PHASES, 'held', DUPLICATE_HOLD]);
  const now = clock.now();
  return rows
    .filter((r) => r.phase === 'held' || r.phase === DUPLICATE_HOLD || isAttentionState(r.state) || isCancelGivenUp(r))
    .map((r) => {
      const since = Date.parse(r.observed_at ?? r.heard_at ?? r.created_at ?? '') || now;
      const held = r.phase === 'held' || r.phase === DUPLICATE_HOLD;
      return {
        batch: r.batch_id, line: r.line, external_id: r.external_id, transaction_id: r.transaction_id,
        state: held ? (r.outcome ?? 'held') : (r.state as string),
        reason: (held ? r.outcome_detail : r.state_reason) ?? '', code: (held ? r.outcome : r.state_reason_code) ?? '',
        output_amount: r.output_amount, output_currency: r.output_currency,
        age_s: Math.max(0, Math.floor((now - since) / 1000)), action: adviceFor(r),
        cancellable: cancelOffer(r) === null, not_cancellable: cancelOffer(r),
      };
    })
    .sort((a, b) => b.age_s - a.age_s);
}

/** A reconciliation report as the audit trail recorded it when it was written, newest first. */
export interface ReconciliationReport {
  /** The period's label: a date, or a range. */
  label: string;
  at: string;
  /** The report's verdict: "0 differences", how many and how many unexplained, or "incomplete: ledger not compared". */
  differences: string;
  /** Green only for a complete report with no difference; amber for an incomplete one; red for differences. */
  tone: 'ok' | 'warn' | 'bad';
  /** Its files still in this workspace's reports folder (names only: they are served from there). */
  files: string[];
}

export const reportsFolder = (workspace: Workspace): string => join(workspace.folders.outbox, 'reports');

/** Names served from the reports folder: what paybatch writes there, nothing else. */
export const REPORT_FILE = /^reconciliation-[0-9A-Za-z_.:-]{1,80}\.(csv|json|xlsx)$/;

export async function reconciliationReports(store: AuditStore, workspace: Workspace): Promise<ReconciliationReport[]> {
  const present = new Set(await readdir(reportsFolder(workspace)).catch(() => [] as string[]));
  const byLabel = new Map<string, ReconciliationReport>();
  for (const entry of await store.reconciliationEntries()) {
    const details = JSON.parse(entry.details) as Record<string, unknown> & { files?: unknown };
    const files = Array.isArray(details.files) ? details.files.filter((f): f is string => typeof f === 'string').map((f) => basename(f)) : [];
    const label = entry.subject.slice('reconciliation '.length);
    // A report written again for its day replaces the earlier one: its files were overwritten.
    // The verdict recorded when it was written: one that does not say every check ran is not shown as clean.
    const verdict = verdictFromFields(details);
    byLabel.set(label, {
      label, at: entry.at, differences: verdict.words, tone: verdictTone(verdict),
      files: files.filter((f) => REPORT_FILE.test(f) && present.has(f)),
    });
  }
  return [...byLabel.values()].sort((a, b) => (a.label < b.label ? 1 : a.label > b.label ? -1 : 0));
}

export interface AuditView {
  entries: AuditEntry[];
  /** The chain as verified: up to which entry and when, extended by the entries after that now; where it first breaks. */
  chain: KeptChain;
  /** Every action in the chain, with how many entries it has: the filter's choices. */
  actions: Record<string, number>;
  /** How many entries the filter lets through (all of them with none); null for an action and a batch together (not counted). */
  matching: number | null;
  /** Whether older entries of the filter are left for the next page. */
  more: boolean;
}

/** Which entries the audit page shows: by action, by batch, and older than an entry (paging). */
export type AuditFilter = AuditPageFilter;

/** The newest `limit` entries the filter lets through (a keyset page), and the chain's kept verification extended. */
export async function auditView(store: AuditStore, limit: number, filter: AuditFilter, now: string): Promise<AuditView> {
  const chain = await extendVerification(store, now);
  const page = await store.auditPage(filter, limit + 1);
  const { actions, batches } = chain.counts;
  const matching = filter.action && filter.batch ? null : filter.action ? actions[filter.action] ?? 0 : filter.batch ? batches[filter.batch] ?? 0 : chain.entries;
  return { entries: page.slice(0, limit), chain, actions, matching, more: page.length > limit };
}
