/** Counts and money of a batch's rows, added up as they stream past: exact integers, never floats. */
import type { ResultRow } from '../store/port.js';
import { resultState } from './results.js';
import { LIMIT_REASONS, PERSON_NEEDED_REASONS } from '../payout-states.js';

const sortedRecord = <T, U>(entries: Iterable<[string, T]>, as: (v: T) => U): Record<string, U> =>
  Object.fromEntries([...entries].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, as(v)]));

export class BatchTally {
  rows = 0;
  private readonly states = new Map<string, number>();
  private readonly reasons = new Map<string, number>();
  /** Rows that need a person for money safety (an answer that did not match, a funding refused, the balance run out). */
  needPerson = 0;
  private readonly fundedTotals = new Map<string, bigint>();
  private readonly paidTotals = new Map<string, bigint>();

  add(row: ResultRow): void {
    this.rows += 1;
    const state = resultState(row);
    this.states.set(state, (this.states.get(state) ?? 0) + 1);
    // Debited from the balance: funded, whatever came of it since (a refund is a later credit).
    if (row.funded_at !== null) this.sum(this.fundedTotals, row.input_currency, row.input_amount);
    if (row.outcome !== null && (LIMIT_REASONS.has(row.outcome) || PERSON_NEEDED_REASONS.has(row.outcome))) this.reasons.set(row.outcome, (this.reasons.get(row.outcome) ?? 0) + 1);
    if (row.outcome !== null && PERSON_NEEDED_REASONS.has(row.outcome)) this.needPerson += 1;
    if (row.state === 'paid') this.sum(this.paidTotals, row.output_currency, row.output_amount);
  }

  private sum(totals: Map<string, bigint>, currency: string | null, amount: string | null): void {
    if (currency && amount) totals.set(currency, (totals.get(currency) ?? 0n) + BigInt(amount));
  }

  get byState(): Record<string, number> {
    return sortedRecord(this.states.entries(), (n) => n);
  }

  /** Rows paybatch refused or held, by reason code (quote, budget, balance, deadlines, mismatches). */
  get byReason(): Record<string, number> {
    return sortedRecord(this.reasons.entries(), (n) => n);
  }

  /** Input currency to the amount funded, minor units. */
  get funded(): Record<string, string> {
    return sortedRecord(this.fundedTotals.entries(), (v) => v.toString());
  }

  /** Output currency to the amount paid out, minor units. */
  get paidOut(): Record<string, string> {
    return sortedRecord(this.paidTotals.entries(), (v) => v.toString());
  }
}
