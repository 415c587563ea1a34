/**
 * `paybatch report`'s use case: reconcile a day or a batch from paybatch's own
 * ledger, check it against the service (every unsettled transaction read,
 * within the polling budget, and the service's ledger where it offers one),
 * and write the files under outbox/reports/. Reading never changes a row: the
 * report says what paybatch knew, and where the service differs.
 */
import type { Lineage } from './lineage.js';
import { lineagesOf } from './lineage.js';
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
import { renderCsv, renderJson, renderText, reportTables } from '../reports/reconciliation-render.js';
import type { LedgerRow, Period, Reconciliation } from '../reports/reconciliation.js';
import { reconcile } from '../reports/reconciliation.js';
import { resultsTable } from '../reports/results.js';
import { writeWorkbook } from '../reports/workbook.js';
import type { AuditStore, IntakeStore, PipelineStore, ReportStore } from '../store/store.js';

/** The audit action of a report written: left out of the head a report prints, so that writing it again gives the same bytes. */
const REPORT_WRITTEN = 'report_written';
import type { Workspace } from '../workspace/workspace.js';

/** Phases whose transaction is not final yet. */
const UNSETTLED: ReadonlySet<string> = new Set(['created', 'funding', 'funded', 'cancelling']);

export type ReportFormat = 'csv' | 'json' | 'xlsx';

export interface ReportRequest {
  date?: string;
  batch?: string;
  /** csv: four files; json: one document; xlsx: one workbook, a sheet per CSV file (and the results, for a batch). */
  format: ReportFormat;
  spreadsheet: boolean;
}

export interface ReportDeps {
  store: ReportStore & AuditStore & Pick<IntakeStore, 'correctionsOf'> & Pick<PipelineStore, 'row'>;
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

/** The report's files under `folder`: one workbook, or the rendered CSV or JSON files. */
async function writeReportFiles(
  req: ReportRequest, report: { reconciliation: Reconciliation; checks: CheckSummary; rows: LedgerRow[] }, folder: string, home: string,
): Promise<string[]> {
  const base = join(folder, `reconciliation-${report.reconciliation.period.label}`);
  if (req.format === 'xlsx') {
    // A batch's workbook carries its result file too: every row, those that moved no money included.
    const tables = [...reportTables(report.reconciliation, report.checks), ...(req.batch ? [resultsTable(report.rows)] : [])];
    await writeWorkbook(home, `${base}.xlsx`, tables);
    return [`${base}.xlsx`];
  }
  const rendered: ReportFiles = req.format === 'json'
    ? renderJson(report.reconciliation, report.checks)
    : renderCsv(report.reconciliation, report.checks, { spreadsheet: req.spreadsheet });
  const files: string[] = [];
  for (const [suffix, content] of Object.entries(rendered)) {
    const file = `${base}${req.spreadsheet && req.format === 'csv' ? '.spreadsheet' : ''}.${suffix}`;
    await writeFileSafely(home, file, content);
    files.push(file);
  }
  return files;
}

/** Rows that may have been corrected: never sent, or ended without being paid. */
const CORRECTABLE_PHASES: ReadonlySet<string> = new Set(['invalid', 'refused', 'not_sent', 'final']);

/** The lineages of the rows in scope that are corrections, or were corrected. */
async function correctionLineages(rows: readonly LedgerRow[], store: ReportDeps['store']): Promise<Lineage[]> {
  const hasCorrections = async (batch: string, line: number): Promise<boolean> => (await store.correctionsOf(batch, line)).length > 0;
  const candidates = rows.filter((r) => r.original_batch || (CORRECTABLE_PHASES.has(r.phase) && r.state !== 'paid'));
  return lineagesOf(store, candidates, hasCorrections);
}

/** [corrections] An original paid (or payable) more than once across its corrections: a difference nobody can explain. */
function paidTwice(lineages: readonly Lineage[]): Difference[] {
  return lineages.filter((l) => l.paying > 1).flatMap((l) => l.steps.filter((s) => s.paysOrMayPay).map((s) => ({
    batch: s.batch, line: s.line, external_id: s.external_id, transaction_id: '', check: 'paid_twice' as const,
    paybatch: `${l.paying} rows of the lineage of ${l.root.external_id} (batch ${l.root.batch}, line ${l.root.line}) paid or may pay`, service: '', explained: '',
  })));
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
  const lineages = await correctionLineages(rows, deps.store);
  differences.push(...paidTwice(lineages));
  const checks: CheckSummary = {
    differences: sortDifferences(differences), transactionsRead: answers.size, serviceLedger, auditHead: await deps.store.auditHead(REPORT_WRITTEN),
    lineages: lineages.flatMap((l) => l.steps.map((step) => ({
      root_batch: l.root.batch, root_line: l.root.line, root_external_id: l.root.external_id, generation: step.generation,
      batch: step.batch, line: step.line, external_id: step.external_id, ended: step.state ?? step.outcome ?? step.phase, pays: step.paysOrMayPay,
    }))),
  };

  const folder = join(deps.workspace.folders.outbox, 'reports');
  await checkFolder(deps.workspace.home, deps.workspace.folders.outbox);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const files = await writeReportFiles(req, { reconciliation, checks, rows }, folder, deps.workspace.home);
  await deps.store.appendAudit({
    at: new Date().toISOString(), actor: 'paybatch', action: REPORT_WRITTEN, subject: `reconciliation ${period.label}`,
    details: { files: files.map((f) => f.slice(deps.workspace.home.length + 1)), differences: checks.differences.length, unexplained: checks.differences.filter((d) => d.explained === '').length, audit_head: checks.auditHead },
  });
  return { reconciliation, checks, files, text: renderText(reconciliation, checks, files) };
}
