/**
 * `paybatch validate`'s use case: reads a batch file and tells, before any money
 * moves, which row and column is wrong and why. Counts every row; lists issues
 * in detail up to a limit; keeps totals per output currency of the valid rows.
 * Memory stays bounded: per row only a line, an amount and a flag are kept.
 */
import type { Issue } from '../validate/issue.js';
import type { RowRuleOptions } from '../validate/row-rules.js';
import { checkRows } from './check-rows.js';
import type { Delimiter } from './delimiter.js';
import type { ReaderOptions } from './reader.js';
import { openBatch } from './reader.js';

export interface ValidationReport {
  file: string;
  sha256: string;
  delimiter: Delimiter;
  rows: number;
  valid: number;
  invalid: number;
  /** Output currency to the sum of the valid rows, in minor units. */
  totals: Record<string, string>;
  errors: Issue[];
  warnings: Issue[];
  errorCount: number;
  warningCount: number;
  /** True when more issues were found than listed (batch.max_reported_issues). */
  truncated: boolean;
}

/** Per-row facts in typed arrays: a million rows cost a few megabytes. */
class RowBook {
  private size = 0;
  private lines = new Uint32Array(1024);
  private amounts = new BigInt64Array(1024);
  private currencies = new Uint16Array(1024);
  private valid = new Uint8Array(1024);
  readonly currencyCodes: string[] = [];

  add(line: number, valid: boolean, amount: bigint, currency: string): void {
    if (this.size === this.lines.length) this.grow();
    let index = this.currencyCodes.indexOf(currency);
    if (index === -1) index = this.currencyCodes.push(currency) - 1;
    this.lines[this.size] = line;
    this.amounts[this.size] = amount;
    this.currencies[this.size] = index;
    this.valid[this.size] = valid ? 1 : 0;
    this.size += 1;
  }

  /** Marks an earlier row invalid; returns its amount and currency when it was counted as valid. */
  invalidate(line: number): { amount: bigint; currency: string } | null {
    let low = 0;
    let high = this.size - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      const at = this.lines[mid] as number;
      if (at === line) {
        if (this.valid[mid] !== 1) return null;
        this.valid[mid] = 0;
        return { amount: this.amounts[mid] as bigint, currency: this.currencyCodes[this.currencies[mid] as number] as string };
      }
      if (at < line) low = mid + 1;
      else high = mid - 1;
    }
    return null;
  }

  private grow(): void {
    const twice = <T extends Uint32Array | BigInt64Array | Uint16Array | Uint8Array>(a: T): T => {
      const bigger = new (a.constructor as new (n: number) => T)(a.length * 2);
      bigger.set(a as never);
      return bigger;
    };
    this.lines = twice(this.lines);
    this.amounts = twice(this.amounts);
    this.currencies = twice(this.currencies);
    this.valid = twice(this.valid);
  }
}

export async function validateFile(
  file: string,
  options: { reader: ReaderOptions; rules: RowRuleOptions; maxReportedIssues: number },
): Promise<ValidationReport> {
  const opened = await openBatch(file, options.reader);
  const report: ValidationReport = {
    file, sha256: '', delimiter: opened.delimiter, rows: 0, valid: 0, invalid: 0, totals: {},
    errors: [], warnings: [], errorCount: 0, warningCount: 0, truncated: false,
  };
  const totals = new Map<string, bigint>();
  const book = new RowBook();
  const listError = (issue: Issue): void => {
    report.errorCount += 1;
    if (report.errors.length < options.maxReportedIssues) report.errors.push(issue);
  };
  const listWarning = (issue: Issue): void => {
    report.warningCount += 1;
    if (report.warnings.length < options.maxReportedIssues) report.warnings.push(issue);
  };
  opened.columns.warnings.forEach(listWarning);

  for await (const event of checkRows(opened.rows, opened.columns, options.rules)) {
    if (event.kind === 'earlier') {
      listError(event.error);
      const undone = book.invalidate(event.line);
      if (undone) {
        report.valid -= 1;
        report.invalid += 1;
        totals.set(undone.currency, (totals.get(undone.currency) ?? 0n) - undone.amount);
      }
      continue;
    }
    report.rows += 1;
    event.errors.forEach(listError);
    event.warnings.forEach(listWarning);
    const valid = event.request !== null;
    if (valid) {
      report.valid += 1;
      const { minor, currency } = event.amount as { minor: bigint; currency: string };
      totals.set(currency, (totals.get(currency) ?? 0n) + minor);
      book.add(event.line, true, minor, currency);
    } else {
      report.invalid += 1;
      book.add(event.line, false, 0n, '');
    }
  }
  report.sha256 = opened.sha256();
  report.totals = Object.fromEntries([...totals.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([c, v]) => [c, v.toString()]));
  const byPlace = (a: Issue, b: Issue): number => a.line - b.line || a.column.localeCompare(b.column);
  report.errors.sort(byPlace);
  report.warnings.sort(byPlace);
  report.truncated = report.errorCount > report.errors.length || report.warningCount > report.warnings.length;
  return report;
}
