/**
 * Checks a batch's rows with the row rules and the rules across rows: one
 * verdict per row as it is read, then, once the file is read, the findings
 * across rows (duplicate external ids make rows invalid after all). A consumer
 * never needs the whole file in memory, but treats a row as provisional until
 * `finish()`.
 */
import type { RowFields } from '../validate/fields.js';
import type { FieldIssue, Issue } from '../validate/issue.js';
import type { RowRuleOptions, RowVerdict } from '../validate/row-rules.js';
import { validateRow } from '../validate/row-rules.js';
import { BatchRules } from '../validate/batch-rules.js';
import type { ColumnPlan } from './columns.js';
import { FingerprintSpill } from './fingerprint-spill.js';
import type { PayoutRequest } from '../api/payout-request.js';
import type { StoredRequest } from '../store/port.js';
import { storedRequest, toPayoutRequest } from './payout-request.js';
import type { BatchRow } from './opened-batch.js';

export interface RowChecked {
  line: number;
  errors: Issue[];
  warnings: Issue[];
  /** The row's external_id as written (normalised), valid or not: results name every row. */
  externalId: string | null;
  /** True when the row is valid so far (a duplicate found at the end may still invalidate it). */
  valid: boolean;
  /** The request body of a valid row, built on demand (validation alone never needs it). */
  request(): PayoutRequest;
  /** The same as the store keeps it (its JSON and the columns from it). */
  stored(): StoredRequest;
  /** Minor units and output currency, when the amount itself is valid. */
  amount: { minor: bigint; currency: string } | null;
  /** A correction's original row, from original_batch and original_line; 'malformed' when they are there but not a batch and a line. */
  origin(): { batch: string; line: number } | 'malformed' | null;
  /** The row's values as read (normalised), kept for an invalid row so that a corrections file can give them back. */
  fields(): RowFields;
}


/** Found across rows once the whole file is read; an error makes that row invalid after all. */
export interface LateFinding {
  line: number;
  severity: 'error' | 'warning';
  issue: Issue;
}

const NONE: Issue[] = [];

class CheckedRow implements RowChecked {
  readonly valid: boolean;
  readonly externalId: string | null;
  readonly amount: { minor: bigint; currency: string } | null;

  constructor(
    readonly line: number,
    readonly errors: Issue[],
    readonly warnings: Issue[],
    private readonly values: RowFields,
    private readonly amountMinor: bigint | null,
  ) {
    this.valid = errors.length === 0 && amountMinor !== null;
    this.externalId = values.external_id ?? null;
    const currency = values.output_currency_code;
    this.amount = amountMinor !== null && currency ? { minor: amountMinor, currency } : null;
  }

  origin(): { batch: string; line: number } | 'malformed' | null {
    const batch = this.values.original_batch?.trim();
    const line = this.values.original_line?.trim();
    if (!batch && !line) return null;
    if (!batch || !line || !/^[1-9]\d{0,8}$/.test(line) || !/^[A-Za-z0-9][A-Za-z0-9_-]{0,79}$/.test(batch)) return 'malformed';
    return { batch, line: Number(line) };
  }

  fields(): RowFields {
    return this.values;
  }

  request(): PayoutRequest {
    if (!this.valid) throw new Error(`line ${this.line} is not valid: it has no request`);
    return toPayoutRequest(this.values, this.amountMinor as bigint);
  }

  stored(): StoredRequest {
    return storedRequest(this.request());
  }
}

/** An issue of a field placed at its line and under the file's own name for the column. */
function locateIssue(columns: ColumnPlan, line: number, issue: FieldIssue): Issue {
  return { line, column: columns.labels[issue.field as keyof ColumnPlan['labels']] ?? issue.field, code: issue.code, message: issue.message };
}

/** One row by the row rules alone: its verdict, and the row as a consumer sees it. Pure. */
export function checkRow(columns: ColumnPlan, options: RowRuleOptions, { line, fields, issues }: BatchRow): { checked: RowChecked; verdict: RowVerdict } {
  const verdict = validateRow(fields, options);
  const locate = (issue: FieldIssue): Issue => locateIssue(columns, line, issue);
  const found = issues === undefined ? verdict.errors : [...issues, ...verdict.errors];
  const errors = found.length === 0 ? NONE : found.map(locate);
  const warnings = verdict.warnings.length === 0 ? NONE : verdict.warnings.map(locate);
  return { checked: new CheckedRow(line, errors, warnings, verdict.values, verdict.amountMinor), verdict };
}

export class RowChecker {
  private readonly batch: BatchRules;

  /**
   * `scratchRefused`: told once, in words for a person, when the scratch file is refused and the fingerprints stay in memory instead;
   * `scratchAfterBytes`: how many bytes of them are kept in memory before the scratch file (batch.scratch_after_bytes).
   */
  constructor(
    private readonly columns: ColumnPlan,
    private readonly options: RowRuleOptions,
    scratchRefused: (message: string) => void,
    scratchAfterBytes: number,
  ) {
    this.batch = new BatchRules(new FingerprintSpill((reason) => scratchRefused(`${reason}; the fingerprints of its rows are kept in memory instead (about 60 bytes a row)`), scratchAfterBytes));
  }

  private locate(line: number, issue: FieldIssue): Issue {
    return locateIssue(this.columns, line, issue);
  }

  check(row: BatchRow): RowChecked {
    const { checked, verdict } = checkRow(this.columns, this.options, row);
    this.batch.check(row.line, verdict.values, verdict.amountMinor, verdict.senderFingerprint);
    return checked;
  }

  /** Records a row checked elsewhere (a worker thread) by its fingerprints for the rules across rows (see rowPrints). */
  record(line: number, prints: Uint32Array, at: number): void {
    this.batch.record(line, prints, at);
  }

  /** Gives back the scratch file of the rows' fingerprints, when the file is not read to its end. */
  close(): void {
    this.batch.close();
  }

  *finish(): Generator<LateFinding> {
    for (const { line, severity, issue } of this.batch.finish()) yield { line, severity, issue: this.locate(line, issue) };
  }
}
