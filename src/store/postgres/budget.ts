/**
 * The funding reservation in PostgreSQL, inside the commit's transaction: the
 * batch row locked when it has a budget, so that workers funding rows of one
 * batch at once never exceed it together; exceedsBudget decides. Fundings
 * without a budget only keep a budgeted one waiting, not each other.
 */
import type { CommitOutcome } from '../port.js';
import type { Reservation } from '../queries/budget.js';
import { BUDGET_SQL, exceedsBudget } from '../queries/budget.js';
import type { PgConnection } from './client.js';

// Sums of amounts are numeric: exact, read as text.
const COMMITTED = BUDGET_SQL.committed('COALESCE(SUM(input_amount::numeric), 0)::text AS total');

export async function reservationRefused(tx: PgConnection, batchId: string, line: number, reserve: Reservation): Promise<CommitOutcome | null> {
  // With a budget, the batch row locked: reservations of one batch, by any worker, are decided one at a time. Without
  // one, a lock only a budgeted reservation waits for (KEY SHARE: fundings without one do not wait for each other,
  // where every funding of the batch by every worker waited on that one row): a worker whose engine.batch_budget is
  // set still counts the funding of one whose is not, once it is committed. A stop read just before another worker
  // writes it lets through one funding the service refuses anyway (the balance ran out).
  await tx.run(`SELECT 1 FROM batches WHERE id = ? ${reserve.budget === null ? 'FOR KEY SHARE' : 'FOR UPDATE'}`, [batchId]);
  const stop = await tx.first<{ detail: string }>(BUDGET_SQL.fundingStop, [batchId, reserve.currency]);
  if (stop) return { kind: 'stopped', detail: stop.detail };
  if (reserve.budget === null) return null;
  const sum = await tx.first<{ total: string }>(COMMITTED, [batchId, reserve.currency, batchId, line]);
  const committed = BigInt((sum?.total ?? '0').split('.')[0] as string);
  return exceedsBudget(committed, reserve) ? { kind: 'over_budget', committed } : null;
}
