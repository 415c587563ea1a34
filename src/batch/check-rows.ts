/**
 * Streams a batch's rows through the row rules and the rules across rows. Yields
 * one verdict per row, and a late finding when a later row makes an earlier one
 * invalid (a duplicate external_id), so that a consumer never needs the whole
 * file in memory.
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
  kind: 'row';
  line: number;
  errors: Issue[];
  warnings: Issue[];
  /** The request body when the row is valid (so far: a later duplicate may still invalidate it). */
  request: PayoutRequest | null;
  /** Minor units and output currency, when the amount itself is valid. */
  amount: { minor: bigint; currency: string } | null;
}

export interface EarlierRowInvalid {
  kind: 'earlier';
  line: number;
  error: Issue;
}

export type CheckEvent = RowChecked | EarlierRowInvalid;

export async function* checkRows(rows: AsyncIterable<BatchRow>, columns: ColumnPlan, options: RowRuleOptions): AsyncGenerator<CheckEvent> {
  const batch = new BatchRules();
  const locate = (line: number) => (issue: FieldIssue): Issue => ({
    line,
    column: columns.labels[issue.field as keyof ColumnPlan['labels']] ?? issue.field,
    code: issue.code,
    message: issue.message,
  });
  for await (const { line, fields } of rows) {
    const verdict = validateRow(fields, options);
    const across = batch.check(line, verdict.values, verdict.amountMinor);
    const errors = [...verdict.errors, ...across.errors].map(locate(line));
    const warnings = [...verdict.warnings, ...across.warnings].map(locate(line));
    const valid = errors.length === 0 && verdict.amountMinor !== null;
    yield {
      kind: 'row',
      line,
      errors,
      warnings,
      request: valid ? toPayoutRequest(verdict.values, verdict.amountMinor as bigint) : null,
      amount: verdict.amountMinor !== null && verdict.values.output_currency_code ? { minor: verdict.amountMinor, currency: verdict.values.output_currency_code } : null,
    };
    for (const earlier of across.earlier) yield { kind: 'earlier', line: earlier.line, error: locate(earlier.line)(earlier.issue) };
  }
}
