/**
 * `paybatch report`'s use case: reconcile a day or a batch from paybatch's own
 * ledger, check it against the service (every unsettled transaction read,
 * within the polling budget, and the service's ledger where it offers one),
 * and write the files under outbox/reports/. Reading never changes a row: the
 * report says what paybatch knew, and where the service differs.
 */
import type { ReportDeps } from './reconcile-deps.js';
import type { Lineage } from './lineage.js';
import { lineagesOf } from './lineage.js';
import { mkdir } from 'node:fs/promises';
import { checkFolder, writeFileSafely } from '../workspace/safe-files.js';
import { join } from 'node:path';
import type { ReportsConfig } from '../config/config.js';
import { UsageError } from '../errors.js';
import { dayPeriod } from '../reports/period.js';
import type { Difference, ServiceLedgerEntry } from '../reports/reconciliation-checks.js';
import { behindOn, compareWithLedger, compareWithService, heldDifferences, sortDifferences } from '../reports/reconciliation-checks.js';
import type { CheckSummary, ReportFiles } from '../reports/reconciliation-render.js';
import type { CheckRun, Verdict } from '../reports/reconciliation-verdict.js';
import { verdictFields, verdictOf } from '../reports/reconciliation-verdict.js';
import { renderCsv, renderJson, renderText, reportTables } from '../reports/reconciliation-render.js';
import type { Period, Reconciliation } from '../reports/reconciliation.js';
import type { LedgerRow, ReportScope } from '../store/port.js';
import { ledgerChecks, reportBase, writeStreamedCsv } from './reconcile-stream.js';
import { reconcile } from '../reports/reconciliation.js';
import { resultsTable } from '../reports/results.js';
import { writeWorkbook } from '../reports/workbook.js';
import { fetchLedger, readUnsettled } from './reconcile-reads.js';

/** The audit action of a report written: left out of the head a report prints, so that writing it again gives the same bytes. */
const REPORT_WRITTEN = 'report_written';
import { systemClock } from '../clock.js';
import { CORRECTABLE_PHASES, OPEN_TRANSACTION_PHASES } from '../payout-states.js';


export type ReportFormat = 'csv' | 'json' | 'xlsx';

export interface ReportRequest {
  date?: string;
  batch?: string;
  /** csv: four files; json: one document; xlsx: one workbook, a sheet per CSV file (and the results, for a batch). */
  format: ReportFormat;
  spreadsheet: boolean;
}

export type { ReportDeps } from './reconcile-deps.js';

export interface ReportOutcome {
  reconciliation: Reconciliation;
  checks: CheckSummary;
  /** What the report may be signed off as: clean, differences, or incomplete (a check did not run). */
  verdict: Verdict;
  files: string[];
  text: string;
}

/** For a log line of the report written (the nightly schedule's): its verdict, as the notifications read it. */
export { verdictFields };

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
    const tables = [...reportTables(report.reconciliation, report.checks), ...(req.batch ? [resultsTable(report.rows, req.batch)] : [])];
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


/** The lineages of the rows in scope that are corrections, or were corrected. */
async function correctionLineages(rows: readonly LedgerRow[], store: ReportDeps['store']): Promise<Lineage[]> {
  const hasCorrections = async (batch: string, line: number): Promise<boolean> => (await store.correctionsOf(batch, line)).length > 0;
  const candidates = rows.filter(isCorrectionCandidate);
  return lineagesOf(store, candidates, hasCorrections);
}

/** [corrections] An original paid (or payable) more than once across its corrections: a difference nobody can explain. */
function paidTwice(lineages: readonly Lineage[]): Difference[] {
  return lineages.filter((l) => l.paying > 1).flatMap((l) => l.steps.filter((s) => s.paysOrMayPay).map((s) => ({
    batch: s.batch, line: s.line, external_id: s.external_id, transaction_id: '', check: 'paid_twice' as const,
    paybatch: `${l.paying} rows of the lineage of ${l.root.external_id} (batch ${l.root.batch}, line ${l.root.line}) paid or may pay`, service: '', explained: '',
  })));
}

const isCorrectionCandidate = (r: LedgerRow): boolean => Boolean(r.original_batch) || ((CORRECTABLE_PHASES as readonly string[]).includes(r.phase) && r.state !== 'paid');

/** The report's folder, checked and made. */
async function reportsFolder(deps: ReportDeps): Promise<string> {
  const folder = join(deps.workspace.folders.outbox, 'reports');
  await checkFolder(deps.workspace.home, deps.workspace.folders.outbox);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  return folder;
}

/** The rows' lineages, as the checks summary lists them. */
const lineageRows = (lineages: readonly Lineage[]): CheckSummary['lineages'] => lineages.flatMap((l) => l.steps.map((step) => ({
  root_batch: l.root.batch, root_line: l.root.line, root_external_id: l.root.external_id, generation: step.generation,
  batch: step.batch, line: step.line, external_id: step.external_id, ended: step.state ?? step.outcome ?? step.phase, pays: step.paysOrMayPay,
})));

/** The report in CSV files, written while the rows are read in pages (src/engine/reconcile-stream.ts): memory does not grow with the day. */
async function writeStreamed(req: ReportRequest, deps: ReportDeps, period: Period, scope: ReportScope): Promise<ReportOutcome> {
  const folder = await reportsFolder(deps);
  const checks = await ledgerChecks(await fetchLedger(deps.ledgerUrl), period, Boolean(req.batch), (id) => deps.store.knowsTransaction(id));
  let summary: Omit<CheckSummary, 'differences'> | null = null;
  const { report, files } = await writeStreamedCsv(deps, scope, period, checks, { base: reportBase(folder, period), options: { spreadsheet: req.spreadsheet } }, isCorrectionCandidate, async (rows) => {
    const lineages = await lineagesOf(deps.store, rows.candidates, async (batch, line) => (await deps.store.correctionsOf(batch, line)).length > 0);
    const { ledger } = checks;
    const runs: CheckRun[] = [
      { check: 'service_states', ran: rows.reads.failure === null, detail: rows.reads.failure === null ? `${rows.reads.read} unsettled transactions read` : `read ${rows.reads.read} of ${rows.reads.unsettled}: ${rows.reads.failure}` },
      { check: 'service_ledger', ran: 'entries' in ledger, detail: 'entries' in ledger ? 'compared' : ledger.notRead },
      { check: 'held_answers', ran: true, detail: 'rows held for an answer that did not match (paybatch\'s own records)' },
      { check: 'corrections_paid_once', ran: true, detail: `${lineages.length} lineages of corrections` },
    ];
    summary = {
      transactionsRead: rows.reads.read, serviceLedger: 'entries' in ledger ? 'compared' : ledger.notRead, runs,
      auditHead: await deps.store.auditHead(REPORT_WRITTEN), lineages: lineageRows(lineages),
    };
    return { summary, others: [...compareWithLedger([], [], checks.strangers), ...paidTwice(lineages)], runs };
  });
  const kept = summary as unknown as Omit<CheckSummary, 'differences'>;
  const verdict = verdictOf(kept.runs, report.counts.differences, report.counts.unexplained);
  const reconciliation: Reconciliation = { period, movements: report.movements, ...report.totals.sorted(), exceptions: report.exceptions };
  const checkSummary: CheckSummary = { ...kept, differences: sortDifferences(report.differences) };
  await appendWritten(deps, period, files, verdict, kept.auditHead);
  return { reconciliation, checks: checkSummary, verdict, files, text: renderText(reconciliation, checkSummary, files, report.counts) };
}

async function appendWritten(deps: ReportDeps, period: Period, files: string[], verdict: Verdict, auditHead: CheckSummary['auditHead']): Promise<void> {
  await deps.store.appendAudit({
    at: new Date().toISOString(), actor: 'paybatch', action: REPORT_WRITTEN, subject: `reconciliation ${period.label}`,
    details: { files: files.map((f) => f.slice(deps.workspace.home.length + 1)), ...verdictFields(verdict), audit_head: auditHead },
  });
}

export async function writeReconciliation(req: ReportRequest, deps: ReportDeps): Promise<ReportOutcome> {
  const period = reportPeriod(req, deps.reports.time_zone);
  const scope = req.batch ? { batch: req.batch } : { from: period.from as string, to: period.to as string };
  if (req.format === 'csv') return writeStreamed(req, deps, period, scope);
  const rows = await deps.store.ledgerRows(scope);
  const reconciliation = reconcile(rows, period, { inFlightDays: deps.reports.in_flight_days });

  const unsettled = rows.filter((r) => r.transaction_id !== null && (OPEN_TRANSACTION_PHASES as readonly string[]).includes(r.phase));
  const states = await readUnsettled(unsettled.map((r) => r.transaction_id as string), deps);
  const answers = states.answers;
  const differences: Difference[] = [...compareWithService(unsettled, answers, (deps.clock ?? systemClock).now()), ...heldDifferences(rows)];
  const ledger = await fetchLedger(deps.ledgerUrl);
  if ('entries' in ledger) {
    const inScope = new Set(rows.flatMap((r) => (r.transaction_id ? [r.transaction_id] : [])));
    const strangers: ServiceLedgerEntry[] = [];
    if (!req.batch) {
      for (const entry of ledger.entries) {
        const at = new Date(entry.at).toISOString();
        if (!entry.transaction_id || inScope.has(entry.transaction_id) || at < (period.from as string) || at >= (period.to as string)) continue;
        if (!(await deps.store.knowsTransaction(entry.transaction_id))) strangers.push(entry);
      }
    }
    // One at a time: spread as arguments, a day of a few hundred thousand differences overflows the call stack.
    for (const d of compareWithLedger(rows, ledger.entries.filter((e) => e.transaction_id !== null && inScope.has(e.transaction_id)), strangers, behindOn(differences))) differences.push(d);
  }
  const lineages = await correctionLineages(rows, deps.store);
  for (const d of paidTwice(lineages)) differences.push(d);
  // Every check named, ran or not: the verdict is "0 differences" only when all of them ran.
  const runs: CheckRun[] = [
    { check: 'service_states', ran: states.stopped === null, detail: states.stopped ?? `${answers.size} unsettled transactions read` },
    { check: 'service_ledger', ran: 'entries' in ledger, detail: 'entries' in ledger ? 'compared' : ledger.notRead },
    { check: 'held_answers', ran: true, detail: 'rows held for an answer that did not match (paybatch\'s own records)' },
    { check: 'corrections_paid_once', ran: true, detail: `${lineages.length} lineages of corrections` },
  ];
  const checks: CheckSummary = {
    differences: sortDifferences(differences), transactionsRead: answers.size, serviceLedger: 'entries' in ledger ? 'compared' : ledger.notRead, runs,
    auditHead: await deps.store.auditHead(REPORT_WRITTEN),
    lineages: lineageRows(lineages),
  };
  const verdict = verdictOf(runs, checks.differences.length, checks.differences.filter((d) => d.explained === '').length);

  const files = await writeReportFiles(req, { reconciliation, checks, rows }, await reportsFolder(deps), deps.workspace.home);
  await appendWritten(deps, period, files, verdict, checks.auditHead);
  return { reconciliation, checks, verdict, files, text: renderText(reconciliation, checks, files) };
}
