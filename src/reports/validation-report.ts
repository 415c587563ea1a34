/** A validation report for people: a table of errors and warnings, and totals per currency. */
import type { ValidationReport } from '../batch/validate-file.js';
import type { Issue } from '../validate/issue.js';
import { currencyDecimals, formatMinor } from '../validate/money.js';

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
  return Object.entries(totals).map(([currency, minor]) => {
    const decimals = currencyDecimals(currency) ?? 2;
    return `  ${currency}  ${formatMinor(BigInt(minor), decimals).padStart(18)}   (${minor} minor units)`;
  });
}

export function renderReport(report: ValidationReport): string {
  const lines = [
    `${report.file}: ${report.rows} rows, ${report.valid} valid, ${report.invalid} invalid, ${report.warningCount} warnings`,
  ];
  if (report.errors.length > 0) lines.push('', `Errors (${report.errorCount})`, ...table(report.errors));
  if (report.warnings.length > 0) lines.push('', `Warnings (${report.warningCount})`, ...table(report.warnings));
  if (report.truncated) lines.push('', `Only the first ${Math.max(report.errors.length, report.warnings.length)} of each are listed (batch.max_reported_issues).`);
  lines.push('', 'Totals of the valid rows, per output currency', ...(Object.keys(report.totals).length > 0 ? formatTotals(report.totals) : ['  none']));
  return `${lines.join('\n')}\n`;
}

