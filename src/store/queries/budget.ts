/**
 * The funding reservation, checked inside the commit's transaction on both
 * databases: a currency stopped (its balance ran out), or the batch's budget
 * that the row's input amount would exceed. The rule is `exceedsBudget`, a
 * pure function; the SQL only reads what the batch has committed.
 */
import type { RowPatch } from '../port.js';

export type Reservation = NonNullable<RowPatch['reserve']>;

/**
 * Whether funding `reserve.amount` more would take the batch over its budget,
 * given what it has `committed` already in that currency. No budget: never.
 */
export function exceedsBudget(committed: bigint, reserve: Reservation): boolean {
  return reserve.budget !== null && committed + reserve.amount > reserve.budget;
}

export const BUDGET_SQL = {
  /** Params: batch, currency. Why funding in this currency stopped for the batch, if it did. */
  fundingStop: 'SELECT detail FROM funding_stops WHERE batch_id = ? AND currency = ?',
  /**
   * Params: batch, currency, batch, line. The input amounts the batch has
   * committed in the currency, the row itself left out, summed by `sum` (each
   * database's exact integer sum). Funded rows count, refunded or not,
   * cancelling ones included; so does a row held after a funding call was sent
   * for it: whether that debit happened is for a person to find out.
   */
  committed: (sum: string): string => `SELECT ${sum} FROM rows WHERE batch_id = ? AND input_currency = ?
      AND NOT (batch_id = ? AND line = ?) AND (phase = 'funding' OR funded_at IS NOT NULL OR (phase = 'held' AND fund_attempts > 0))`,
};
