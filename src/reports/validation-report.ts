/** A validation report for people: a table of errors and warnings, and totals per currency. */
import type { ValidationReport } from '../batch/validate-file.js';
import type { Issue } from '../validate/issue.js';
import type { Outlier } from '../validate/outliers.js';
import { formatMoney } from '../validate/money.js';

function table(issues: readonly Issue[]): string[] {
  const width = (pick: (i: Issue) => string, title: string, max: number): number =>
    Math.min(max, Math.max(title.length, ...issues.map((i) => pick(i).length)));
  const wLine = width((i) => String(i.line), 'LINE', 8);
  const wColumn = width((i) => i.column, 'COLUMN', 30);
  const wCode = width((i) => i.code, 'CODE', 26);
  const row = (line: string, column: string, code: string, message: string): string =>
    `  ${line.padStart(wLine)}  ${column.padEnd(wColumn)}  ${code.padEnd(wCode)}  ${message}`;
  return [row('LINE', 'COLUMN', 'CODE', 'MESSAGE'), ...issues.map((i) => row(String(i.line), i.column, i.code, i.message))];
}

function formatTotals(totals: Record<string, string>): string[] {
  return Object.entries(totals).map(([currency, minor]) => `  ${currency}  ${formatMoney(minor, currency).slice(0, -currency.length - 1).padStart(24)}   (${minor} minor units)`);
}

/** Rows far above the batch's usual amounts (validate/outliers.ts), each with why. */
export function outlierLines(outliers: readonly Outlier[]): string[] {
  if (outliers.length === 0) return [];
  return [`Amounts to check before anyone approves (${outliers.length})`, ...outliers.map((o) => `  line ${o.line}  ${o.external_id ?? ''}  ${o.message}`)];
}

export function renderReport(report: ValidationReport, outliers: readonly Outlier[] = []): string {
  const lines = [
    `${report.file}: ${report.rows} rows, ${report.valid} valid, ${report.invalid} invalid, ${report.warningCount} warnings`,
  ];
  if (report.errors.length > 0) lines.push('', `Errors (${report.errorCount})`, ...table(report.errors));
  if (report.warnings.length > 0) lines.push('', `Warnings (${report.warningCount})`, ...table(report.warnings));
  if (outliers.length > 0) lines.push('', ...outlierLines(outliers));
  if (report.truncated) lines.push('', `Only the first ${Math.max(report.errors.length, report.warnings.length)} of each are listed (batch.max_reported_issues).`);
  lines.push('', 'Totals of the valid rows, per output currency', ...(Object.keys(report.totals).length > 0 ? formatTotals(report.totals) : ['  none']));
  return `${lines.join('\n')}\n`;
}

