/**
 * Every answer is checked against what was asked before anything is done with
 * it (STYLE 14): a transaction named in an answer, a lookup or a webhook must be
 * the row's own (its id, its external_id) and carry the row's amounts and
 * currencies. A service that answers with another transaction, another amount
 * or another currency is never funded and never counted as paid. Pure.
 */
import type { ServiceTransaction } from '../api/answers.js';
import { redactAccountNumbers } from '../api/redact.js';
import type { PayoutRequest } from '../api/payout-request.js';

/** What paybatch asked: the row's request, the transaction id once it has one, the input amount once it is committed. */
export interface Asked {
  external_id: string;
  request: PayoutRequest;
  transaction_id: string | null;
  /** The input amount funded (or sent in the funding's guard [D10]): an answer may not change it any more. */
  committed_input_amount?: string | null;
}

/** One field of an answer that is not what was asked. */
export interface Mismatch {
  field: 'id' | 'external_id' | 'output_amount_in_cents' | 'output_currency' | 'input_currency' | 'input_amount_in_cents';
  asked: string;
  answered: string;
}

/** A value the service gave, as people read it: an account number quoted in it is shortened. */
const shown = (value: string | null): string => (value === null ? '(absent)' : redactAccountNumbers(value));

/**
 * A stored row's answer to a call made outside decide (a cancellation's, a read before one), checked as decide checks
 * a read of it: once funded, its input amount may not change either [D10].
 */
export function checkRowAnswer(row: Omit<Asked, 'committed_input_amount'> & { funded_at: string | null; input_amount: string | null }, tx: ServiceTransaction): Mismatch[] {
  return checkAnswer({ external_id: row.external_id, request: row.request, transaction_id: row.transaction_id, committed_input_amount: row.funded_at !== null ? row.input_amount : null }, tx);
}

/** The fields of `tx` that differ from the row; empty when the answer is the row's own transaction. */
export function checkAnswer(asked: Asked, tx: ServiceTransaction): Mismatch[] {
  const mismatches: Mismatch[] = [];
  const expect = (field: Mismatch['field'], wanted: string, answered: string | null): void => {
    // Amounts and currency codes are shown as they came; identifiers, free text from the service, are shortened where account-like.
    if (answered !== wanted) mismatches.push({ field, asked: wanted, answered: field === 'id' || field === 'external_id' ? shown(answered) : answered ?? '(absent)' });
  };
  if (asked.transaction_id !== null) expect('id', asked.transaction_id, tx.id);
  expect('external_id', asked.external_id, tx.external_id);
  expect('output_amount_in_cents', asked.request.output_amount_in_cents, tx.output_amount_in_cents);
  expect('output_currency', asked.request.output_currency_code, tx.output_currency);
  expect('input_currency', asked.request.input_currency_code, tx.input_currency);
  if (asked.committed_input_amount) expect('input_amount_in_cents', asked.committed_input_amount, tx.input_amount_in_cents);
  return mismatches;
}

/**
 * [D7] The transaction a lookup by external_id found, if it found exactly the
 * row's own; a list holding anything else (another external_id, two hits) is a
 * mismatch: which of them is ours cannot be known.
 */
export function lookupHit(asked: Asked, found: readonly ServiceTransaction[]): { tx: ServiceTransaction | null; mismatches: Mismatch[] } {
  const strangers = found.filter((tx) => tx.external_id !== asked.external_id);
  if (strangers.length > 0) {
    return { tx: null, mismatches: strangers.map((tx) => ({ field: 'external_id', asked: asked.external_id, answered: shown(tx.external_id) })) };
  }
  if (found.length > 1) {
    return { tx: null, mismatches: [{ field: 'id', asked: `one transaction for ${asked.external_id}`, answered: found.map((tx) => tx.id).join(', ') }] };
  }
  const [tx] = found;
  if (!tx) return { tx: null, mismatches: [] };
  return { tx, mismatches: checkAnswer(asked, tx) };
}

/** One line for people and logs: what was asked and what came back, field by field. */
export function describeMismatches(what: string, mismatches: readonly Mismatch[]): string {
  return `${what} did not match the request: ${mismatches.map((m) => `${m.field} asked ${m.asked}, answered ${m.answered}`).join('; ')}`;
}
