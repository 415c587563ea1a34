/**
 * A reconciliation written as CSV files while paybatch's ledger is read in
 * pages (by keyset on batch and line): each movement, exception and difference
 * is written as it is found, and only the totals (bigint), the counts, the
 * rows a correction check needs and a few for the caller are kept. The files
 * are the same bytes as the whole report rendered at once
 * (src/reports/reconciliation-render.ts): the rows come in the files' order,
 * and a row's own exceptions and differences are sorted among themselves.
 * Differences not of one row (the service's entries for transactions paybatch
 * never made, a lineage paid twice) are known first or last: they are merged
 * into their places from a part file written beside the checks file.
 */
import { createReadStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import type { Cell } from '../reports/cells.js';
import type { Difference, ServiceLedgerEntry } from '../reports/reconciliation-checks.js';
import { behindOn, compareWithLedger, compareWithService, heldDifferences, sortDifferences } from '../reports/reconciliation-checks.js';
import type { CheckSummary, RenderOptions, ReportCounts } from '../reports/reconciliation-render.js';
import { COLUMNS, csvHeader, csvRecord, differenceCells, exceptionCells, lineageTable, movementCells, summaryRows } from '../reports/reconciliation-render.js';
import type { CheckRun } from '../reports/reconciliation-verdict.js';
import type { ExceptionLine, Movement, Period } from '../reports/reconciliation.js';
import { ReconcileTotals, reconcileRow } from '../reports/reconciliation.js';
import type { LedgerRow, ReportScope } from '../store/port.js';
import type { SafeStream } from '../workspace/safe-files.js';
import { openSafely } from '../workspace/safe-files.js';
import { OPEN_TRANSACTION_PHASES } from '../payout-states.js';
import { systemClock } from '../clock.js';
import type { LedgerRead } from './reconcile-reads.js';
import { readUnsettled } from './reconcile-reads.js';
import type { ReportDeps } from './reconcile-deps.js';

/**
 * Rows read from the store at a time. A page's rows live until the last is written: at 5,000 they were some 25 MB of
 * the heap, and a million-row day peaked at 145 to 155 MB (goal: under 150); at 1,000, 118 to 119 MB, as fast.
 */
const PAGE_ROWS = 1_000;
/** Of each list, how many the outcome keeps for its caller (the files hold them all). */
export const PREVIEW = 1_000;

/** A CSV file written record by record, waiting for the disk when it falls behind. */
class CsvOut {
  private constructor(private readonly out: SafeStream, private readonly options: RenderOptions) {}

  static async open(home: string, path: string, header: string, options: RenderOptions): Promise<CsvOut> {
    const file = new CsvOut(await openSafely(home, path), options);
    await file.write(header);
    return file;
  }

  async write(text: string): Promise<void> {
    if (!this.out.stream.write(text)) await once(this.out.stream, 'drain');
  }

  record(cells: Cell[]): Promise<void> {
    return this.write(csvRecord(cells, this.options));
  }

  commit(): Promise<void> {
    return this.out.commit();
  }

  abandon(): Promise<void> {
    return this.out.abandon();
  }
}

const keyOf = (d: Difference): string => `${d.batch}\u0000${String(d.line).padStart(10, '0')}\u0000${d.transaction_id}\u0000${d.check}`;

export interface StreamedChecks {
  /** Read before the rows: the service's ledger, by transaction, and its entries for transactions paybatch never made. */
  ledger: LedgerRead;
  byTransaction: Map<string, ServiceLedgerEntry[]>;
  strangers: ServiceLedgerEntry[];
}

/** What the stream kept: totals, counts, a preview of each list, and what the checks that follow the rows need. */
export interface StreamedReport {
  totals: ReconcileTotals;
  counts: ReportCounts & { movements: number };
  movements: Movement[];
  exceptions: ExceptionLine[];
  differences: Difference[];
  /** Rows a correction could concern (src/engine/reconcile-report.ts, correctionLineages). */
  candidates: LedgerRow[];
  reads: { read: number; unsettled: number; failure: string | null };
}

interface Outputs {
  movements: CsvOut;
  exceptions: CsvOut;
  /** The rows' own differences, each line [key, CSV record], merged into the checks file at the end. */
  part: CsvOut;
  /** How the records are shaped, the part file's as the checks file's. */
  options: RenderOptions;
}

/** Reads the rows page by page, writing what each moved, its exceptions and its differences as they are found. */
export async function streamRows(
  deps: ReportDeps, scope: ReportScope, period: Period, checks: StreamedChecks, out: Outputs, isCandidate: (row: LedgerRow) => boolean,
): Promise<StreamedReport> {
  const kept: StreamedReport = {
    totals: new ReconcileTotals(), counts: { movements: 0, exceptions: 0, differences: 0, unexplained: 0 },
    movements: [], exceptions: [], differences: [], candidates: [], reads: { read: 0, unsettled: 0, failure: null },
  };
  const options = { inFlightDays: deps.reports.in_flight_days };
  const gap = Math.ceil(1000 / deps.readsPerSecond);
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let after: { batch: string; line: number } | null = null; ;) {
    const page: LedgerRow[] = await deps.store.ledgerRowPage(scope, after, deps.pageRows ?? PAGE_ROWS);
    if (page.length === 0) break;
    const last = page[page.length - 1] as LedgerRow;
    after = { batch: last.batch_id, line: last.line };
    const unsettled = page.filter((r) => r.transaction_id !== null && (OPEN_TRANSACTION_PHASES as readonly string[]).includes(r.phase));
    kept.reads.unsettled += unsettled.length;
    let answers = new Map<string, Awaited<ReturnType<typeof readUnsettled>>['answers'] extends Map<string, infer V> ? V : never>();
    if (unsettled.length > 0 && kept.reads.failure === null) {
      if (kept.reads.read > 0) await sleep(gap);
      const states = await readUnsettled(unsettled.map((r) => r.transaction_id as string), deps);
      answers = states.answers;
      kept.reads.read += answers.size;
      kept.reads.failure = states.failure ?? (states.stopped === null ? null : states.stopped);
    }
    const now = (deps.clock ?? systemClock).now();
    for (const row of page) await writeRow(row, { period, options, checks, answers, now }, kept, out, isCandidate);
  }
  return kept;
}

interface RowContext {
  period: Period;
  options: { inFlightDays: number };
  checks: StreamedChecks;
  answers: ReadonlyMap<string, Parameters<typeof compareWithService>[1] extends ReadonlyMap<string, infer V> ? V : never>;
  now: number;
}

async function writeRow(row: LedgerRow, ctx: RowContext, kept: StreamedReport, out: Outputs, isCandidate: (row: LedgerRow) => boolean): Promise<void> {
  const added = reconcileRow(row, ctx.period, ctx.options, kept.totals);
  if (added.movement) {
    kept.counts.movements += 1;
    if (kept.movements.length < PREVIEW) kept.movements.push(added.movement);
    await out.movements.record(movementCells(added.movement));
  }
  for (const e of added.exceptions) {
    kept.counts.exceptions += 1;
    if (kept.exceptions.length < PREVIEW) kept.exceptions.push(e);
    await out.exceptions.record(exceptionCells(e));
  }
  if (isCandidate(row)) kept.candidates.push(row);
  const differences = [...compareWithService(ctx.answers.has(row.transaction_id ?? '') ? [row] : [], ctx.answers, ctx.now), ...heldDifferences([row])];
  if ('entries' in ctx.checks.ledger && row.transaction_id) {
    for (const d of compareWithLedger([row], ctx.checks.byTransaction.get(row.transaction_id) ?? [], [], behindOn(differences))) differences.push(d);
  }
  for (const d of sortDifferences(differences)) await writeDifference(d, kept, out);
}

async function writeDifference(d: Difference, kept: Pick<StreamedReport, 'counts' | 'differences'>, out: Outputs): Promise<void> {
  kept.counts.differences += 1;
  if (d.explained === '') kept.counts.unexplained += 1;
  if (kept.differences.length < PREVIEW) kept.differences.push(d);
  await out.part.write(`${JSON.stringify([keyOf(d), csvRecord(differenceCells(d), out.options)])}\n`);
}

/** The checks file: its header, then the rows' differences from the part file and the others, merged in order. */
async function finishChecks(home: string, path: string, partPath: string, others: Difference[], options: RenderOptions): Promise<void> {
  const file = await CsvOut.open(home, path, csvHeader({ columns: COLUMNS.checks }, options), options);
  try {
    const rest = sortDifferences(others);
    let next = 0;
    const lines = createInterface({ input: createReadStream(partPath, 'utf8'), crlfDelay: Infinity });
    for await (const line of lines) {
      if (line === '') continue;
      const [key, record] = JSON.parse(line) as [string, string];
      while (next < rest.length && keyOf(rest[next] as Difference) < key) await file.record(differenceCells(rest[next++] as Difference));
      await file.write(record);
    }
    while (next < rest.length) await file.record(differenceCells(rest[next++] as Difference));
    await file.commit();
  } catch (error) {
    await file.abandon();
    throw error;
  }
}

export interface StreamedFiles {
  report: StreamedReport;
  files: string[];
}

/**
 * Writes the report's CSV files under `base` (movements, summary, exceptions, checks, and lineage when a correction is
 * in scope). `finish` is given what the rows left and says the summary's checks and the differences not of one row.
 */
export async function writeStreamedCsv(
  deps: ReportDeps, scope: ReportScope, period: Period, checks: StreamedChecks, target: { base: string; options: RenderOptions },
  isCandidate: (row: LedgerRow) => boolean,
  finish: (report: StreamedReport) => Promise<{ summary: Omit<CheckSummary, 'differences'>; others: Difference[]; runs: CheckRun[] }>,
): Promise<StreamedFiles> {
  const home = deps.workspace.home;
  const { base, options } = target;
  const name = (suffix: string): string => `${base}${options.spreadsheet ? '.spreadsheet' : ''}.${suffix}`;
  const partPath = name('checks.csv.part');
  const out: Outputs = {
    movements: await CsvOut.open(home, name('movements.csv'), csvHeader({ columns: COLUMNS.movements }, options), options),
    exceptions: await CsvOut.open(home, name('exceptions.csv'), csvHeader({ columns: COLUMNS.exceptions }, options), options),
    part: await CsvOut.open(home, partPath, '', options),
    options,
  };
  let report: StreamedReport;
  try {
    report = await streamRows(deps, scope, period, checks, out, isCandidate);
  } catch (error) {
    await Promise.all([out.movements.abandon(), out.exceptions.abandon(), out.part.abandon()]);
    throw error;
  }
  await Promise.all([out.movements.commit(), out.exceptions.commit(), out.part.commit()]);
  try {
    const ended = await finish(report);
    for (const d of ended.others) {
      report.counts.differences += 1;
      if (d.explained === '') report.counts.unexplained += 1;
      if (report.differences.length < PREVIEW) report.differences.push(d);
    }
    const summary = await CsvOut.open(home, name('summary.csv'), csvHeader({ columns: COLUMNS.summary }, options), options);
    for (const cells of summaryRows({ period, ...report.totals.sorted() }, ended.summary, report.counts)) await summary.record(cells);
    await summary.commit();
    await finishChecks(home, name('checks.csv'), partPath, ended.others, options);
    const files = [name('movements.csv'), name('summary.csv'), name('exceptions.csv'), name('checks.csv')];
    if (ended.summary.lineages && ended.summary.lineages.length > 0) {
      const table = lineageTable(ended.summary.lineages);
      const lineage = await CsvOut.open(home, name('lineage.csv'), csvHeader(table, options), options);
      for (const cells of table.rows) await lineage.record(cells);
      await lineage.commit();
      files.push(name('lineage.csv'));
    }
    return { report, files };
  } finally {
    await unlink(partPath).catch(() => {});
  }
}

/** The service's ledger by transaction, and (for a day) its entries in the period for transactions paybatch never made. */
export async function ledgerChecks(ledger: LedgerRead, period: Period, byBatch: boolean, knows: (transactionId: string) => Promise<boolean>): Promise<StreamedChecks> {
  const byTransaction = new Map<string, ServiceLedgerEntry[]>();
  const strangers: ServiceLedgerEntry[] = [];
  if (!('entries' in ledger)) return { ledger, byTransaction, strangers };
  for (const entry of ledger.entries) {
    if (!entry.transaction_id) continue;
    const list = byTransaction.get(entry.transaction_id);
    if (list) list.push(entry);
    else byTransaction.set(entry.transaction_id, [entry]);
    if (byBatch) continue;
    const at = new Date(entry.at).toISOString();
    if (at < (period.from as string) || at >= (period.to as string)) continue;
    // A transaction in scope is one paybatch knows: only those it does not know are strangers.
    if (!(await knows(entry.transaction_id))) strangers.push(entry);
  }
  return { ledger, byTransaction, strangers };
}

export const reportBase = (folder: string, period: Period): string => join(folder, `reconciliation-${period.label}`);
