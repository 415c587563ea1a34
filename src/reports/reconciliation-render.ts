/**
 * A reconciliation as files: CSV (movements, summary, exceptions, checks), the
 * same four as typed tables for a workbook's sheets (written by
 * src/reports/workbook.ts), or one JSON document; and a short text for people.
 * Pure: the same reconciliation gives the same bytes; the only time in them is
 * the period's.
 * Amounts appear twice: in minor units, and in major units with the currency's
 * decimals [D9], formatted from the integer, never through a float.
 */
import { currencyDecimals, formatMinor, formatMoney } from '../validate/money.js';
import type { Cell } from './cells.js';
import { csvField, instant, integer, major, minor, text } from './cells.js';
import { csvLine } from './csv-line.js';
import type { Difference } from './reconciliation-checks.js';
import type { ExceptionLine, Movement, Reconciliation } from './reconciliation.js';
import type { CheckRun, Verdict } from './reconciliation-verdict.js';
import { verdictOf } from './reconciliation-verdict.js';
import type { SheetColumn } from './workbook.js';

export interface CheckSummary {
  differences: Difference[];
  /** Unsettled transactions read from the service for the check. */
  transactionsRead: number;
  /** Whether the service's ledger was compared, and if not why. */
  serviceLedger: string;
  /** Every check, ran or not: a report is complete only when each ran (reconciliation-verdict.ts). */
  runs: CheckRun[];
  /** The audit trail's head when the report was made: a later rewrite of history is caught against it. */
  auditHead: { seq: number; hash: string };
  /** Corrections the period touches: each original with its corrections and how each ended. */
  lineages?: LineageRow[];
}

/** One row of a lineage: an original (generation 0) or one of its corrections. */
export interface LineageRow {
  root_batch: string;
  root_line: number;
  root_external_id: string;
  generation: number;
  batch: string;
  line: number;
  external_id: string;
  ended: string;
  /** Paid, or funded and not ended: across a lineage, at most one may. */
  pays: boolean;
}

export interface RenderOptions {
  /** For spreadsheets in locales that need it: UTF-8 BOM, `;` between fields, decimal comma. */
  spreadsheet: boolean;
}

export type ReportFiles = Record<string, string>;

/** One part of the report: a CSV file, or a sheet of the workbook; the same columns and cells in both. */
export interface ReportTable {
  name: 'movements' | 'summary' | 'exceptions' | 'checks' | 'lineage';
  columns: SheetColumn[];
  rows: Cell[][];
}

const columns = (headers: string[], widths: Record<string, number> = {}): SheetColumn[] =>
  headers.map((header) => ({ header, width: widths[header] ?? Math.max(12, header.length + 2) }));

const IDS = { batch: 20, external_id: 20, transaction_id: 24 };
const TIMES = { funded_at: 20, paid_at: 20, refunded_at: 20 };

function csv(table: ReportTable, options: RenderOptions): string {
  return `${csvHeader(table, options)}${table.rows.map((cells) => csvRecord(cells, options)).join('')}`;
}

/** The report's verdict: "0 differences" only when every check ran and found none. */
export function checksVerdict(checks: CheckSummary): Verdict {
  return verdictOf(checks.runs, checks.differences.length, unexplainedCount(checks));
}

export const unexplainedCount = (checks: CheckSummary): number => checks.differences.filter((d) => d.explained === '').length;

/** Each table's columns. */
export const COLUMNS = {
  movements: columns(['batch', 'line', 'external_id', 'transaction_id', 'state', 'funded_at', 'debited_minor', 'debited', 'input_currency', 'paid_out_minor', 'paid_out', 'output_currency', 'refunded_minor', 'refunded', 'paid_at', 'refunded_at', 'state_reason_code'], { ...IDS, ...TIMES }),
  summary: columns(['section', 'item', 'currency', 'amount_minor', 'amount', 'value'], { item: 20, value: 24 }),
  exceptions: columns(['batch', 'line', 'external_id', 'transaction_id', 'kind', 'state', 'reason'], { ...IDS, kind: 16, reason: 60 }),
  checks: columns(['batch', 'line', 'external_id', 'transaction_id', 'check', 'paybatch', 'service', 'explained'], { ...IDS, check: 16, paybatch: 30, service: 30, explained: 40 }),
};

export const movementCells = (m: Movement): Cell[] => [
  text(m.batch), integer(m.line), text(m.external_id), text(m.transaction_id), text(m.state), instant(m.funded_at),
  minor(m.debited), major(m.debited, m.input_currency), text(m.input_currency),
  minor(m.output_amount), major(m.output_amount, m.output_currency), text(m.output_currency),
  minor(m.refunded), major(m.refunded, m.input_currency), instant(m.paid_at), instant(m.refunded_at), text(m.state_reason_code),
];
export const exceptionCells = (e: ExceptionLine): Cell[] => [text(e.batch), integer(e.line), text(e.external_id), text(e.transaction_id), text(e.kind), text(e.state), text(e.reason)];
export const differenceCells = (d: Difference): Cell[] => [text(d.batch), integer(d.line), text(d.external_id), text(d.transaction_id), text(d.check), text(d.paybatch), text(d.service), text(d.explained)];

export function lineageTable(lineages: readonly LineageRow[]): ReportTable {
  return {
    name: 'lineage',
    columns: columns(['root_batch', 'root_line', 'root_external_id', 'generation', 'batch', 'line', 'external_id', 'ended', 'pays'], { ...IDS, root_batch: 22, root_external_id: 20, ended: 24 }),
    rows: lineages.map((l) => [text(l.root_batch), integer(l.root_line), text(l.root_external_id), integer(l.generation), text(l.batch), integer(l.line), text(l.external_id), text(l.ended), text(l.pays ? 'yes' : 'no')]),
  };
}

/** One record of a CSV file, as the whole file's rendering writes it. */
export function csvRecord(cells: Cell[], options: RenderOptions): string {
  const csv = { decimalComma: options.spreadsheet };
  return csvLine(cells.map((cell) => csvField(cell, csv)), options.spreadsheet ? ';' : ',');
}

export const csvHeader = (table: Pick<ReportTable, 'columns'>, options: RenderOptions): string =>
  `${options.spreadsheet ? '\uFEFF' : ''}${csvLine(table.columns.map((c) => c.header), options.spreadsheet ? ';' : ',')}`;

/** The report's four parts, in the order of their files. */
export function reportTables(rec: Reconciliation, checks: CheckSummary): ReportTable[] {
  const movements: ReportTable = {
    name: 'movements',
    columns: COLUMNS.movements,
    rows: rec.movements.map(movementCells),
  };
  const summary: ReportTable = { name: 'summary', columns: COLUMNS.summary, rows: summaryRows(rec, checks, { exceptions: rec.exceptions.length, differences: checks.differences.length, unexplained: unexplainedCount(checks) }) };
  const exceptions: ReportTable = { name: 'exceptions', columns: COLUMNS.exceptions, rows: rec.exceptions.map(exceptionCells) };
  const checkRows: ReportTable = { name: 'checks', columns: COLUMNS.checks, rows: checks.differences.map(differenceCells) };
  const lineage: ReportTable[] = checks.lineages && checks.lineages.length > 0 ? [lineageTable(checks.lineages)] : [];
  return [movements, summary, exceptions, checkRows, ...lineage];
}

/** How many the report lists of each, and of its differences how many nobody explained. */
export interface ReportCounts {
  exceptions: number;
  differences: number;
  unexplained: number;
}

/** The summary's lines: the period, the totals, the states, the counts, every check, and the verdict. */
export function summaryRows(rec: Pick<Reconciliation, 'period' | 'input' | 'paidOut' | 'states'>, checks: Omit<CheckSummary, 'differences'>, counts: ReportCounts): Cell[][] {
  const line = (section: string, item: string, currency: string | null, amount: bigint | null, value: Cell): Cell[] =>
    [text(section), text(item), text(currency), minor(amount), amount === null ? null : major(amount, currency), value];
  const summaryRows: Cell[][] = [
    line('period', 'from', null, null, instant(rec.period.from)),
    line('period', 'to', null, null, instant(rec.period.to)),
  ];
  for (const [currency, t] of rec.input) {
    for (const item of ['debited', 'refunded', 'net', 'in_flight'] as const) summaryRows.push(line('input', item, currency, t[item], null));
  }
  for (const [currency, amount] of rec.paidOut) summaryRows.push(line('output', 'paid_out', currency, amount, null));
  for (const [state, count] of rec.states) summaryRows.push(line('state', state, null, null, integer(count)));
  summaryRows.push(line('exceptions', 'rows', null, null, integer(counts.exceptions)));
  summaryRows.push(line('checks', 'transactions_read', null, null, integer(checks.transactionsRead)));
  summaryRows.push(line('checks', 'service_ledger', null, null, text(checks.serviceLedger)));
  summaryRows.push(line('checks', 'differences', null, null, integer(counts.differences)));
  summaryRows.push(line('audit', 'chain_head', null, null, text(`${checks.auditHead.seq}:${checks.auditHead.hash}`)));
  summaryRows.push(line('checks', 'unexplained', null, null, integer(counts.unexplained)));
  for (const run of checks.runs) summaryRows.push(line('check', run.check, null, null, text(`${run.ran ? 'ran' : 'NOT RUN'}: ${run.detail}`)));
  const verdict = verdictOf(checks.runs, counts.differences, counts.unexplained);
  summaryRows.push(line('verdict', 'complete', null, null, text(verdict.complete ? 'yes' : 'no')));
  summaryRows.push(line('verdict', 'result', null, null, text(verdict.words)));
  return summaryRows;
}

export function renderCsv(rec: Reconciliation, checks: CheckSummary, options: RenderOptions): ReportFiles {
  return Object.fromEntries(reportTables(rec, checks).map((table) => [`${table.name}.csv`, csv(table, options)]));
}

export function renderJson(rec: Reconciliation, checks: CheckSummary): ReportFiles {
  const amount = (value: bigint | null, currency: string): { minor: string; major: string } | null =>
    value === null ? null : { minor: value.toString(), major: formatMinor(value, currencyDecimals(currency) ?? 2) };
  const verdict = checksVerdict(checks);
  const document = {
    period: rec.period,
    movements: rec.movements.map((m) => ({
      ...m,
      debited: amount(m.debited, m.input_currency),
      output_amount: amount(m.output_amount, m.output_currency),
      refunded: amount(m.refunded, m.input_currency),
    })),
    summary: {
      input: Object.fromEntries([...rec.input].map(([c, t]) => [c, {
        debited: amount(t.debited, c), refunded: amount(t.refunded, c), net: amount(t.net, c), in_flight: amount(t.in_flight, c),
      }])),
      paid_out: Object.fromEntries([...rec.paidOut].map(([c, v]) => [c, amount(v, c)])),
      states: Object.fromEntries(rec.states),
    },
    exceptions: rec.exceptions,
    verdict: { status: verdict.status, complete: verdict.complete, result: verdict.words, not_run: verdict.notRun, unexplained: verdict.unexplained },
    checks: {
      transactions_read: checks.transactionsRead, service_ledger: checks.serviceLedger, result: verdict.words,
      list: checks.runs, unexplained: unexplainedCount(checks), differences: checks.differences, audit_chain_head: checks.auditHead,
    },
    lineage: checks.lineages ?? [],
  };
  return { 'json': `${JSON.stringify(document, null, 2)}\n` };
}

/** A few lines for the terminal. */
export function renderText(rec: Reconciliation, checks: CheckSummary, files: readonly string[], counts?: ReportCounts & { movements: number }): string {
  const lines = [`reconciliation ${rec.period.label}${rec.period.from ? ` (${rec.period.from} to ${rec.period.to})` : ''}: ${counts?.movements ?? rec.movements.length} transactions moved money`];
  for (const [c, t] of rec.input) {
    const f = (v: bigint): string => formatMoney(v, c);
    lines.push(`  ${c}: debited ${f(t.debited)}, refunded ${f(t.refunded)}, net ${f(t.net)}, in flight at the end ${f(t.in_flight)}`);
  }
  for (const [c, v] of rec.paidOut) lines.push(`  paid out ${formatMoney(v, c)}`);
  lines.push(`  exceptions: ${counts?.exceptions ?? rec.exceptions.length}`);
  const verdict = counts ? verdictOf(checks.runs, counts.differences, counts.unexplained) : checksVerdict(checks);
  lines.push(`  checks: ${checks.transactionsRead} unsettled transactions read from the service; service ledger ${checks.serviceLedger}; ${verdict.words}`);
  for (const run of checks.runs.filter((r) => !r.ran)) lines.push(`  NOT CHECKED: ${run.check.replace(/_/g, ' ')}: ${run.detail}`);
  if (!verdict.complete) lines.push('  this report is incomplete: what was not checked cannot be signed off; a person must look');
  lines.push(`  audit trail head ${checks.auditHead.seq}:${checks.auditHead.hash} (paybatch audit verify --head ${checks.auditHead.seq}:${checks.auditHead.hash})`);
  for (const file of files) lines.push(`  ${file}`);
  return `${lines.join('\n')}\n`;
}
