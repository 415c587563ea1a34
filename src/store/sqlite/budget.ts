/**
 * The funding reservation in SQLite, inside the commit's transaction: the
 * currency stopped, or the batch's budget exceeded (exceedsBudget decides).
 */
import type { CommitOutcome } from '../port.js';
import type { Reservation } from '../queries/budget.js';
import { BUDGET_SQL, exceedsBudget } from '../queries/budget.js';
import type { SqliteConnection } from './connection.js';

// Integer arithmetic in SQLite, read as bigint: exact.
const COMMITTED = BUDGET_SQL.committed('COALESCE(SUM(CAST(input_amount AS INTEGER)), 0)');

/** The balance of the currency ran out for this batch, or its budget would be exceeded: what was already committed says. */
export function reservationRefused(c: SqliteConnection, batchId: string, line: number, reserve: Reservation): CommitOutcome | null {
  const stop = c.sql(BUDGET_SQL.fundingStop).pluck().get(batchId, reserve.currency) as string | undefined;
  if (stop !== undefined) return { kind: 'stopped', detail: stop };
  if (reserve.budget === null) return null;
  const committed = c.sql(COMMITTED).pluck().safeIntegers(true).get(batchId, reserve.currency, batchId, line) as bigint;
  return exceedsBudget(committed, reserve) ? { kind: 'over_budget', committed } : null;
}
