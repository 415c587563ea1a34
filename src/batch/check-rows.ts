/**
 * Checks a batch's rows with the row rules and the rules across rows: one
 * verdict per row as it is read, then, once the file is read, the findings
 * across rows (duplicate external ids make rows invalid after all). A consumer
 * never needs the whole file in memory, but treats a row as provisional until
 * `finish()`.
 */
import type { FieldIssue, Issue } from '../validate/issue.js';
import type { RowRuleOptions } from '../validate/row-rules.js';
import { validateRow } from '../validate/row-rules.js';
import { BatchRules } from '../validate/batch-rules.js';
import type { ColumnPlan } from './columns.js';
import type { PayoutRequest } from './payout-request.js';
import { toPayoutRequest } from './payout-request.js';
import type { BatchRow } from './reader.js';

export interface RowChecked {
  line: number;
  errors: Issue[];
  warnings: Issue[];
  /** True when the row is valid so far (a duplicate found at the end may still invalidate it). */
  valid: boolean;
  /** The request body of a valid row, built on demand (validation alone never needs it). */
  request(): PayoutRequest;
  /** Minor units and output currency, when the amount itself is valid. */
  amount: { minor: bigint; currency: string } | null;
}

/** Found across rows once the whole file is read; an error makes that row invalid after all. */
export interface LateFinding {
  line: number;
  severity: 'error' | 'warning';
  issue: Issue;
}

export class RowChecker {
  private readonly batch = new BatchRules();

  constructor(
    private readonly columns: ColumnPlan,
    private readonly options: RowRuleOptions,
  ) {}

  private locate(line: number, issue: FieldIssue): Issue {
    return { line, column: this.columns.labels[issue.field as keyof ColumnPlan['labels']] ?? issue.field, code: issue.code, message: issue.message };
  }

  check({ line, fields }: BatchRow): RowChecked {
    const verdict = validateRow(fields, this.options);
    const senderWarnings = this.batch.check(line, verdict.values, verdict.amountMinor);
    const errors = verdict.errors.map((issue) => this.locate(line, issue));
    const warnings = [...verdict.warnings, ...senderWarnings].map((issue) => this.locate(line, issue));
    const valid = errors.length === 0 && verdict.amountMinor !== null;
    const currency = verdict.values.output_currency_code;
    return {
      line,
      errors,
      warnings,
      valid,
      request: () => {
        if (!valid) throw new Error(`line ${line} is not valid: it has no request`);
        return toPayoutRequest(verdict.values, verdict.amountMinor as bigint);
      },
      amount: verdict.amountMinor !== null && currency ? { minor: verdict.amountMinor, currency } : null,
    };
  }

  finish(): LateFinding[] {
    const across = this.batch.finish();
    return [
      ...across.errors.map(({ line, issue }) => ({ line, severity: 'error' as const, issue: this.locate(line, issue) })),
      ...across.warnings.map(({ line, issue }) => ({ line, severity: 'warning' as const, issue: this.locate(line, issue) })),
    ];
  }
}
