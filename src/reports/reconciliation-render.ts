/**
 * A reconciliation as files: CSV (movements, summary, exceptions, checks) or one
 * JSON document, and a short text for people. Pure: the same reconciliation
 * gives the same bytes; the only time in them is the period's.
 * Amounts appear twice: in minor units, and in major units with the currency's
 * decimals [D9], formatted from the integer, never through a float.
 */
import { stringify } from 'csv-stringify/sync';
import { currencyDecimals, formatMinor } from '../validate/money.js';
import type { Difference } from './reconciliation-checks.js';
import type { Reconciliation } from './reconciliation.js';
import { neutralise } from './results.js';

export interface CheckSummary {
  differences: Difference[];
  /** Unsettled transactions read from the service for the check. */
  transactionsRead: number;
  /** Whether the service's ledger was compared, and if not why. */
  serviceLedger: string;
  /** The audit trail's head when the report was made: a later rewrite of history is caught against it. */
  auditHead: { seq: number; hash: string };
}

export interface RenderOptions {
  /** For spreadsheets in locales that need it: UTF-8 BOM, `;` between fields, decimal comma. */
  spreadsheet: boolean;
}

export type ReportFiles = Record<string, string>;

function major(amount: bigint | null, currency: string, options: RenderOptions): string {
  if (amount === null) return '';
  const text = formatMinor(amount, currencyDecimals(currency) ?? 2);
  return options.spreadsheet ? text.replace('.', ',') : text;
}

const minor = (amount: bigint | null): string => (amount === null ? '' : amount.toString());

function csv(header: string[], records: string[][], options: RenderOptions): string {
  const text = stringify([header, ...records.map((r) => r.map(neutralise))], { delimiter: options.spreadsheet ? ';' : ',', record_delimiter: '\n' });
  return options.spreadsheet ? `\uFEFF${text}` : text;
}

/** "0 differences" for a clean report; otherwise how many, and how many of them nobody can explain. */
export function differencesLine(checks: CheckSummary): string {
  return differencesWords(checks.differences.length, unexplainedCount(checks));
}

/** The same words from the two counts (as the audit trail keeps them for each report). */
export function differencesWords(n: number, unexplained: number): string {
  if (n === 0) return '0 differences';
  return `${n} difference${n === 1 ? '' : 's'}: ${unexplained} unexplained, ${n - unexplained} explained (paybatch behind the service)`;
}

export const unexplainedCount = (checks: CheckSummary): number => checks.differences.filter((d) => d.explained === '').length;

export function renderCsv(rec: Reconciliation, checks: CheckSummary, options: RenderOptions): ReportFiles {
  const movements = csv(
    ['batch', 'line', 'external_id', 'transaction_id', 'state', 'funded_at', 'debited_minor', 'debited', 'input_currency', 'paid_out_minor', 'paid_out', 'output_currency', 'refunded_minor', 'refunded', 'paid_at', 'refunded_at', 'state_reason_code'],
    rec.movements.map((m) => [
      m.batch, String(m.line), m.external_id, m.transaction_id, m.state, m.funded_at,
      minor(m.debited), major(m.debited, m.input_currency, options), m.input_currency,
      minor(m.output_amount), major(m.output_amount, m.output_currency, options), m.output_currency,
      minor(m.refunded), major(m.refunded, m.input_currency, options), m.paid_at, m.refunded_at, m.state_reason_code,
    ]),
    options,
  );
  const summaryRows: string[][] = [
    ['period', 'from', '', '', '', rec.period.from ?? ''],
    ['period', 'to', '', '', '', rec.period.to ?? ''],
  ];
  for (const [currency, t] of rec.input) {
    for (const item of ['debited', 'refunded', 'net', 'in_flight'] as const) summaryRows.push(['input', item, currency, minor(t[item]), major(t[item], currency, options), '']);
  }
  for (const [currency, amount] of rec.paidOut) summaryRows.push(['output', 'paid_out', currency, minor(amount), major(amount, currency, options), '']);
  for (const [state, count] of rec.states) summaryRows.push(['state', state, '', '', '', String(count)]);
  summaryRows.push(['exceptions', 'rows', '', '', '', String(rec.exceptions.length)]);
  summaryRows.push(['checks', 'transactions_read', '', '', '', String(checks.transactionsRead)]);
  summaryRows.push(['checks', 'service_ledger', '', '', '', checks.serviceLedger]);
  summaryRows.push(['checks', 'differences', '', '', '', String(checks.differences.length)]);
  summaryRows.push(['audit', 'chain_head', '', '', '', `${checks.auditHead.seq}:${checks.auditHead.hash}`]);
  summaryRows.push(['checks', 'unexplained', '', '', '', String(unexplainedCount(checks))]);
  const summary = csv(['section', 'item', 'currency', 'amount_minor', 'amount', 'value'], summaryRows, options);
  const exceptions = csv(
    ['batch', 'line', 'external_id', 'transaction_id', 'kind', 'state', 'reason'],
    rec.exceptions.map((e) => [e.batch, String(e.line), e.external_id, e.transaction_id, e.kind, e.state, e.reason]),
    options,
  );
  const checkRows = csv(
    ['batch', 'line', 'external_id', 'transaction_id', 'check', 'paybatch', 'service', 'explained'],
    checks.differences.map((d) => [d.batch, String(d.line), d.external_id, d.transaction_id, d.check, d.paybatch, d.service, d.explained]),
    options,
  );
  return { 'movements.csv': movements, 'summary.csv': summary, 'exceptions.csv': exceptions, 'checks.csv': checkRows };
}

export function renderJson(rec: Reconciliation, checks: CheckSummary): ReportFiles {
  const amount = (value: bigint | null, currency: string): { minor: string; major: string } | null =>
    value === null ? null : { minor: value.toString(), major: formatMinor(value, currencyDecimals(currency) ?? 2) };
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
    checks: {
      transactions_read: checks.transactionsRead, service_ledger: checks.serviceLedger, result: differencesLine(checks),
      unexplained: unexplainedCount(checks), differences: checks.differences, audit_chain_head: checks.auditHead,
    },
  };
  return { 'json': `${JSON.stringify(document, null, 2)}\n` };
}

/** A few lines for the terminal. */
export function renderText(rec: Reconciliation, checks: CheckSummary, files: readonly string[]): string {
  const lines = [`reconciliation ${rec.period.label}${rec.period.from ? ` (${rec.period.from} to ${rec.period.to})` : ''}: ${rec.movements.length} transactions moved money`];
  for (const [c, t] of rec.input) {
    const f = (v: bigint): string => `${formatMinor(v, currencyDecimals(c) ?? 2)} ${c}`;
    lines.push(`  ${c}: debited ${f(t.debited)}, refunded ${f(t.refunded)}, net ${f(t.net)}, in flight at the end ${f(t.in_flight)}`);
  }
  for (const [c, v] of rec.paidOut) lines.push(`  paid out ${formatMinor(v, currencyDecimals(c) ?? 2)} ${c}`);
  lines.push(`  exceptions: ${rec.exceptions.length}`);
  lines.push(`  checks: ${checks.transactionsRead} unsettled transactions read from the service; service ledger ${checks.serviceLedger}; ${differencesLine(checks)}`);
  lines.push(`  audit trail head ${checks.auditHead.seq}:${checks.auditHead.hash} (paybatch audit verify --head ${checks.auditHead.seq}:${checks.auditHead.hash})`);
  for (const file of files) lines.push(`  ${file}`);
  return `${lines.join('\n')}\n`;
}
