/** A row as both databases return it for the intake port (ROW_RECORD_COLUMNS), and as the port gives it. */
import { storedRequest } from '../batch/payout-request.js';
import { readRequest } from '../batch/request-text.js';
import type { RowFields } from '../validate/fields.js';
import type { Issue } from '../validate/issue.js';
import type { NewRow, RecipientEntry, RowRecord, StoredRequest } from './port.js';
import { phaseOf, reasonCodeOf } from '../payout-states.js';

export interface RowColumns {
  batch_id: string;
  line: number;
  external_id: string | null;
  /** Checked against the vocabulary as the row is read, with its outcome (payout-states.ts). */
  phase: string;
  outcome: string | null;
  errors: string | null;
  request: string | null;
  outcome_detail: string | null;
  state: string | null;
  state_reason: string | null;
  state_reason_code: string | null;
  invalid_fields: string | null;
  original_batch: string | null;
  original_line: number | null;
}

export function toRowRecord(row: RowColumns): RowRecord {
  const { invalid_fields: fields, ...rest } = row;
  return {
    ...rest,
    phase: phaseOf(row.phase),
    outcome: reasonCodeOf(row.outcome),
    errors: row.errors ? (JSON.parse(row.errors) as Issue[]) : [],
    request: row.request ? readRequest(row.request) : null,
    fields: fields ? (JSON.parse(fields) as RowFields) : null,
  };
}

/** A new row's request as the store keeps it: made where it was checked, or from its request here; null for an invalid row. */
export function storedOf(row: NewRow): StoredRequest | null {
  return row.stored ?? (row.request ? storedRequest(row.request) : null);
}

/**
 * The recipient entry a row stored sendable gets with it (the possible-duplicate check's index, row_recipients): its
 * account, amount and currency as the request sends them; null when it names no account.
 */
export function recipientEntryOf(line: number, stored: StoredRequest): RecipientEntry | null {
  return stored.recipientKey === null ? null : { line, key: stored.recipientKey, currency: stored.outputCurrency, amount: stored.outputAmount };
}
