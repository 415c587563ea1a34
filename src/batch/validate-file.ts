/**
 * `paybatch validate`'s use case: reads a batch file and tells, before any money
 * moves, which row and column is wrong and why. Counts every row; lists issues
 * in detail up to a limit; keeps totals per output currency of the valid rows.
 * Memory stays bounded: per row only fingerprints and a line are kept, by the
 * rules across rows.
 */
import type { Issue } from '../validate/issue.js';
import type { RowRuleOptions } from '../validate/row-rules.js';
import type { LateFinding, RowChecked } from './check-rows.js';
import { RowChecker } from './check-rows.js';
import type { Delimiter } from './delimiter.js';
import type { ReaderOptions } from './opened-batch.js';
import { openBatch } from './reader.js';
import { validateRow } from '../validate/row-rules.js';
import type { ParallelCheck } from './parallel-check.js';
import { checkCsvInParallel, segmentError } from './parallel-check.js';
import { PRINTS_PER_ROW } from '../validate/batch-rules.js';
import { keptRow } from './segment-check.js';
import { BatchFileError } from './file-error.js';

export interface ValidationReport {
  file: string;
  sha256: string;
  /** CSV only; null for a spreadsheet. */
  delimiter: Delimiter | null;
  /** The sheet read, for a spreadsheet (absent for CSV). */
  sheet?: string;
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

/**
 * Takes rows that a duplicate external_id made invalid at the end back out of the
 * totals. They were counted as valid only if the row rules passed, so a second
 * streaming pass re-checks just those lines (the rules are pure: the same row
 * gives the same verdict). Duplicates are rare, so usually there is no second pass.
 */
async function uncount(file: string, lines: ReadonlySet<number>, options: { reader: ReaderOptions; rules: RowRuleOptions }): Promise<{ currency: string; minor: bigint }[]> {
  const undone: { currency: string; minor: bigint }[] = [];
  if (lines.size === 0) return undone;
  const opened = await openBatch(file, options.reader);
  for await (const row of opened.rows) {
    if (!lines.has(row.line)) continue;
    const verdict = validateRow(row.fields, options.rules);
    if (verdict.errors.length === 0 && verdict.amountMinor !== null && verdict.values.output_currency_code) {
      undone.push({ currency: verdict.values.output_currency_code, minor: verdict.amountMinor });
    }
  }
  return undone;
}

/**
 * A spreadsheet row's issues, with their cell, before anyone sees them (the
 * report, and the intake that stores them). The arrays are the row's own, made
 * by the checker for it (an empty one may be shared: it has nothing to replace).
 */
function placeAll(checked: RowChecked, place: (issue: Issue) => Issue): void {
  for (const issues of [checked.errors, checked.warnings]) {
    for (let i = 0; i < issues.length; i++) issues[i] = place(issues[i] as Issue);
  }
}

/** What a caller may do with each row as it is checked (intake stores them). */
export interface ValidationHooks {
  row?(checked: RowChecked): void | Promise<void>;
  /** A finding across rows, once the file is read; an error makes that row invalid after all. */
  late?(finding: LateFinding): void | Promise<void>;
  /**
   * Each valid row's amount, as it is read (for the outliers): cheaper than `row`, which keeps whole rows. The
   * external_id is null for a large CSV checked on several threads (only the amounts come back from them).
   */
  amount?(line: number, externalId: string | null, currency: string, minor: bigint): void;
  /** The scratch file of a large file's fingerprints was refused: they stay in memory, and the caller says so (`message`: why, and what follows). */
  scratchRefused?(message: string): void;
}

/** The report as it fills, and how issues are listed in it (up to the limit, all counted). */
function newReport(file: string, delimiter: Delimiter | null, sheet: string | undefined, maxReportedIssues: number): { report: ValidationReport; listError(issue: Issue): void; listWarning(issue: Issue): void } {
  const report: ValidationReport = {
    file, sha256: '', delimiter, ...(sheet === undefined ? {} : { sheet }), rows: 0, valid: 0, invalid: 0, totals: {},
    errors: [], warnings: [], errorCount: 0, warningCount: 0, truncated: false,
  };
  return {
    report,
    listError(issue) {
      report.errorCount += 1;
      if (report.errors.length < maxReportedIssues) report.errors.push(issue);
    },
    listWarning(issue) {
      report.warningCount += 1;
      if (report.warnings.length < maxReportedIssues) report.warnings.push(issue);
    },
  };
}

export async function validateFile(
  file: string,
  options: { reader: ReaderOptions; rules: RowRuleOptions; maxReportedIssues: number },
  hooks: ValidationHooks = {},
): Promise<ValidationReport> {
  // A large CSV file or pain.001 is parsed and checked on every core; the same report comes of it.
  const how = { reader: options.reader, rules: options.rules, keepRows: hooks.row !== undefined };
  const parallel = /\.xml$/i.test(file) ? await (await import('./iso20022/pain001-parallel.js')).checkPain001InParallel(file, how) : await checkCsvInParallel(file, how);
  if (parallel) return validateInParallel(file, parallel, options, hooks);
  const opened = await openBatch(file, options.reader);
  const { report, listError, listWarning } = newReport(file, opened.delimiter, opened.sheet, options.maxReportedIssues);
  const place = opened.place;
  const totals = new Map<string, bigint>();
  (place ? opened.columns.warnings.map(place) : opened.columns.warnings).forEach(listWarning);

  const checker = new RowChecker(opened.columns, options.rules, (message) => hooks.scratchRefused?.(message), options.reader.scratchAfterBytes);
  try {
    for await (const row of opened.rows) {
      const checked = checker.check(row);
      if (place) placeAll(checked, place);
      report.rows += 1;
      checked.errors.forEach(listError);
      checked.warnings.forEach(listWarning);
      if (hooks.row) await hooks.row(checked);
      if (checked.valid) {
        report.valid += 1;
        const { minor, currency } = checked.amount as { minor: bigint; currency: string };
        totals.set(currency, (totals.get(currency) ?? 0n) + minor);
        hooks.amount?.(checked.line, checked.externalId, currency, minor);
      } else {
        report.invalid += 1;
      }
    }
    report.sha256 = opened.sha256();
    return await finishReport({ report, listError, listWarning }, { checker, totals, place, file, options, hooks });
  } finally {
    // The scratch file of the rows' fingerprints, when the file was not read to its end.
    checker.close();
  }
}

/** The same report from pieces checked on worker threads (see parallel-check.ts). */
async function validateInParallel(
  file: string,
  parallel: ParallelCheck,
  options: { reader: ReaderOptions; rules: RowRuleOptions; maxReportedIssues: number },
  hooks: ValidationHooks,
): Promise<ValidationReport> {
  const listing = newReport(file, parallel.delimiter, undefined, options.maxReportedIssues);
  const { report, listError, listWarning } = listing;
  const totals = new Map<string, bigint>();
  parallel.columns.warnings.forEach(listWarning);
  const checker = new RowChecker(parallel.columns, options.rules, (message) => hooks.scratchRefused?.(message), options.reader.scratchAfterBytes);
  try {
    const none: Issue[] = [];
    for await (const segment of parallel.segments) {
      let next = 0;
      for (let at = 0; at < segment.rows; at++) {
        checker.record(segment.lines[at] as number, segment.prints, at * PRINTS_PER_ROW);
        report.rows += 1;
        let errors = none;
        let warnings = none;
        for (; next < segment.issues.length && segment.issues[next]?.at === at; next++) {
          const { severity, issue } = segment.issues[next] as (typeof segment.issues)[number];
          if (severity === 'error') {
            listError(issue);
            if (hooks.row) errors = errors === none ? [issue] : [...errors, issue];
          } else {
            listWarning(issue);
            if (hooks.row) warnings = warnings === none ? [issue] : [...warnings, issue];
          }
        }
        if (hooks.row) await hooks.row(keptRow(segment, at, errors, warnings));
        if (segment.valid[at] === 1) {
          report.valid += 1;
          hooks.amount?.(segment.lines[at] as number, segment.kept?.externalIds[at] ?? null, segment.amountCurrencies[segment.amountCurrencyAt[at] as number] as string, segment.validAmounts[at] as bigint);
        } else report.invalid += 1;
      }
      for (const [currency, minor] of segment.validTotals) totals.set(currency, (totals.get(currency) ?? 0n) + BigInt(minor));
      // Said as one thread says it: csv-parse (or saxes) words a syntax error by what it read before, and a thread read less.
      if (segment.error) throw (await errorOnOneThread(file, options.reader)) ?? segmentError(segment.error);
    }
    if (report.rows === 0) throw new BatchFileError('no_rows', null, 'the file has a header but no rows');
    report.sha256 = parallel.sha256();
    return await finishReport(listing, { checker, totals, place: parallel.place, file, options, hooks });
  } finally {
    // The scratch file of the rows' fingerprints, when the file was not read to its end.
    checker.close();
  }
}

/** The error that ends the file when it is read on one thread (rows only parsed, not checked), or null. */
async function errorOnOneThread(file: string, reader: ReaderOptions): Promise<BatchFileError | null> {
  try {
    for await (const _row of (await openBatch(file, reader)).rows) void _row;
  } catch (error) {
    if (error instanceof BatchFileError) return error;
    throw error;
  }
  return null;
}

/** Once every row is read: the findings across rows, the rows they make invalid taken out of the totals, the lists sorted. */
async function finishReport(
  { report, listError, listWarning }: ReturnType<typeof newReport>,
  { checker, totals, place, file, options, hooks }: {
    checker: RowChecker; totals: Map<string, bigint>; place: ((issue: Issue) => Issue) | undefined; file: string;
    options: { reader: ReaderOptions; rules: RowRuleOptions }; hooks: ValidationHooks;
  },
): Promise<ValidationReport> {
  const madeInvalid = new Set<number>();
  for (const found of checker.finish()) {
    const late = place ? { ...found, issue: place(found.issue) } : found;
    if (hooks.late) await hooks.late(late);
    if (late.severity === 'warning') listWarning(late.issue);
    else {
      listError(late.issue);
      madeInvalid.add(late.line);
    }
  }
  for (const { currency, minor } of await uncount(file, madeInvalid, options)) {
    report.valid -= 1;
    report.invalid += 1;
    totals.set(currency, (totals.get(currency) ?? 0n) - minor);
  }
  report.totals = Object.fromEntries([...totals.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([c, v]) => [c, v.toString()]));
  const byPlace = (a: Issue, b: Issue): number => a.line - b.line || a.column.localeCompare(b.column);
  report.errors.sort(byPlace);
  report.warnings.sort(byPlace);
  report.truncated = report.errorCount > report.errors.length || report.warningCount > report.warnings.length;
  return report;
}
