/**
 * `paybatch report`'s use case: reconcile a day or a batch from paybatch's own
 * ledger, check it against the service (every unsettled transaction read,
 * within the polling budget, and the service's ledger where it offers one),
 * and write the files under outbox/reports/. Reading never changes a row: the
 * report says what paybatch knew, and where the service differs.
 */
import { mkdir } from 'node:fs/promises';
import { checkFolder, writeFileSafely } from '../workspace/safe-files.js';
import { join } from 'node:path';
import { request } from 'undici';
import type { ServiceTransaction } from '../api/answers.js';
import type { PayoutClient } from '../api/client.js';
import { Rejected } from '../api/errors.js';
import type { ReportsConfig } from '../config/config.js';
import { UsageError } from '../errors.js';
import { dayPeriod } from '../reports/period.js';
import type { Difference, ServiceLedgerEntry } from '../reports/reconciliation-checks.js';
import { behindOn, compareWithLedger, compareWithService, heldDifferences, sortDifferences } from '../reports/reconciliation-checks.js';
import type { CheckSummary, ReportFiles } from '../reports/reconciliation-render.js';
import { renderCsv, renderJson, renderText } from '../reports/reconciliation-render.js';
import type { Period, Reconciliation } from '../reports/reconciliation.js';
import { reconcile } from '../reports/reconciliation.js';
import type { AuditStore, ReportStore } from '../store/store.js';

/** The audit action of a report written: left out of the head a report prints, so that writing it again gives the same bytes. */
const REPORT_WRITTEN = 'report_written';
import type { Workspace } from '../workspace/workspace.js';

/** Phases whose transaction is not final yet. */
const UNSETTLED: ReadonlySet<string> = new Set(['created', 'funding', 'funded', 'cancelling']);

export interface ReportRequest {
  date?: string;
  batch?: string;
  format: 'csv' | 'json';
  spreadsheet: boolean;
}

export interface ReportDeps {
  store: ReportStore & AuditStore;
  client: Pick<PayoutClient, 'getTransaction'>;
  workspace: Workspace;
  reports: ReportsConfig;
  /** The polling budget's rate: reads for the check are spaced by it [D17]. */
  readsPerSecond: number;
  /** Where the service's ledger is, if it has one. */
  ledgerUrl: string | null;
  sleep?: (ms: number) => Promise<void>;
}

export interface ReportOutcome {
  reconciliation: Reconciliation;
  checks: CheckSummary;
  files: string[];
  text: string;
}

async function fetchLedger(url: string): Promise<(ServiceLedgerEntry & { at: number })[]> {
  const entries: (ServiceLedgerEntry & { at: number; seq: number })[] = [];
  for (let after = 0; ;) {
    const target = new URL(url);
    target.searchParams.set('after', String(after));
    target.searchParams.set('limit', '10000');
    const response = await request(target, { headersTimeout: 15_000, bodyTimeout: 15_000 });
    if (response.statusCode !== 200) {
      await response.body.dump();
      throw new Error(`the service ledger ${url} answered ${response.statusCode}`);
    }
    const page = (await response.body.json()) as (ServiceLedgerEntry & { at: number; seq: number })[];
    if (!Array.isArray(page) || page.length === 0) return entries;
    entries.push(...page);
    after = (page[page.length - 1] as { seq: number }).seq;
  }
}

/** Reads each transaction once, spaced to stay within the polling budget; null when the service does not know it. */
async function readUnsettled(ids: readonly string[], deps: ReportDeps): Promise<Map<string, ServiceTransaction | null>> {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const answers = new Map<string, ServiceTransaction | null>();
  const gap = Math.ceil(1000 / deps.readsPerSecond);
  for (const [index, id] of ids.entries()) {
    if (index > 0) await sleep(gap);
    try {
      answers.set(id, await deps.client.getTransaction(id));
    } catch (error) {
      if (!(error instanceof Rejected)) throw error;
      answers.set(id, null);
    }
  }
  return answers;
}

/** The service's ledger: configured, or the embedded sandbox's own. */
export function ledgerUrlFor(reports: ReportsConfig, embeddedOperatorUrl: string | null): string | null {
  return reports.service_ledger_url ?? (embeddedOperatorUrl ? `${embeddedOperatorUrl}/ledger` : null);
}

export function reportPeriod(request: Pick<ReportRequest, 'date' | 'batch'>, timeZone: string): Period {
  if (request.batch) return { label: request.batch, from: null, to: null };
  const period = request.date ? dayPeriod(request.date, timeZone) : null;
  if (!period) throw new UsageError(`--date must be a calendar date as YYYY-MM-DD, not "${request.date ?? ''}"`);
  return period;
}

export async function writeReconciliation(req: ReportRequest, deps: ReportDeps): Promise<ReportOutcome> {
  const period = reportPeriod(req, deps.reports.time_zone);
  const scope = req.batch ? { batch: req.batch } : { from: period.from as string, to: period.to as string };
  const rows = await deps.store.ledgerRows(scope);
  const reconciliation = reconcile(rows, period, { inFlightDays: deps.reports.in_flight_days });

  const unsettled = rows.filter((r) => r.transaction_id !== null && UNSETTLED.has(r.phase));
  const answers = await readUnsettled(unsettled.map((r) => r.transaction_id as string), deps);
  const differences: Difference[] = [...compareWithService(unsettled, answers), ...heldDifferences(rows)];
  let serviceLedger = 'not offered by the service';
  if (deps.ledgerUrl) {
    const entries = await fetchLedger(deps.ledgerUrl);
    const inScope = new Set(rows.flatMap((r) => (r.transaction_id ? [r.transaction_id] : [])));
    const strangers: ServiceLedgerEntry[] = [];
    if (!req.batch) {
      for (const entry of entries) {
        const at = new Date(entry.at).toISOString();
        if (!entry.transaction_id || inScope.has(entry.transaction_id) || at < (period.from as string) || at >= (period.to as string)) continue;
        if (!(await deps.store.knowsTransaction(entry.transaction_id))) strangers.push(entry);
      }
    }
    differences.push(...compareWithLedger(rows, entries.filter((e) => e.transaction_id !== null && inScope.has(e.transaction_id)), strangers, behindOn(differences)));
    serviceLedger = 'compared';
  }
  const checks: CheckSummary = { differences: sortDifferences(differences), transactionsRead: answers.size, serviceLedger, auditHead: await deps.store.auditHead(REPORT_WRITTEN) };

  const rendered: ReportFiles = req.format === 'json' ? renderJson(reconciliation, checks) : renderCsv(reconciliation, checks, { spreadsheet: req.spreadsheet });
  const folder = join(deps.workspace.folders.outbox, 'reports');
  await checkFolder(deps.workspace.home, deps.workspace.folders.outbox);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const files: string[] = [];
  for (const [suffix, content] of Object.entries(rendered)) {
    const file = join(folder, `reconciliation-${period.label}${req.spreadsheet && req.format === 'csv' ? '.spreadsheet' : ''}.${suffix}`);
    await writeFileSafely(deps.workspace.home, file, content);
    files.push(file);
  }
  await deps.store.appendAudit({
    at: new Date().toISOString(), actor: 'paybatch', action: REPORT_WRITTEN, subject: `reconciliation ${period.label}`,
    details: { files: files.map((f) => f.slice(deps.workspace.home.length + 1)), differences: checks.differences.length, unexplained: checks.differences.filter((d) => d.explained === '').length, audit_head: checks.auditHead },
  });
  return { reconciliation, checks, files, text: renderText(reconciliation, checks, files) };
}
