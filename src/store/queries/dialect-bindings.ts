/**
 * The methods each database gives its own way, in its own folder's query
 * modules (intake, pipeline, coordination, audit, outbox), under the same names
 * and signatures: bound to a connection here, once for both stores. A database
 * gives the functions (its modules), this gives the port's methods. What a
 * database gives differently (commitRow, suspendIntake, the possible
 * duplicates' transactions, close) each store binds itself, saying why.
 */
import type { Store } from '../port.js';

/** The port methods each database's query modules give by the same name, taking the connection first. */
export type DialectBound =
  | 'beginBatch' | 'addRows' | 'invalidateRow' | 'rejectBatch' | 'withdrawBatch' | 'acceptBatch'
  | 'stopCurrency' | 'batchCorridors' | 'endReadyRowsOfCorridor' | 'dueReads' | 'catchUpReads' | 'metricsFigures'
  | 'acquireLease' | 'appendAudit' | 'claimDueNotifications';

/** A port method as a query function: the connection, then the method's arguments. */
type TakingConnection<C, F> = F extends (...args: infer A) => infer R ? (c: C, ...args: A) => R : never;

/** A database's query functions for the DialectBound methods, on its connection type C. */
export type DialectQueries<C> = { readonly [K in DialectBound]: TakingConnection<C, Store[K]> };

/**
 * The DialectBound methods on connection `c`. Each is one closure made here at
 * open, calling the database's function with its arguments as given (no rest
 * arguments, nothing allocated a call): dueReads is on the hot path.
 */
export function dialectBindings<C>(c: C, queries: DialectQueries<C>): Pick<Store, DialectBound> {
  const {
    beginBatch, addRows, invalidateRow, rejectBatch, withdrawBatch, acceptBatch,
    stopCurrency, batchCorridors, endReadyRowsOfCorridor, dueReads, catchUpReads, metricsFigures,
    acquireLease, appendAudit, claimDueNotifications,
  } = queries;
  return {
    // intake
    beginBatch: (batch) => beginBatch(c, batch),
    addRows: (batchId, rows) => addRows(c, batchId, rows),
    invalidateRow: (batchId, line, error) => invalidateRow(c, batchId, line, error),
    rejectBatch: (batchId, reason) => rejectBatch(c, batchId, reason),
    withdrawBatch: (batchId, outcome, reason) => withdrawBatch(c, batchId, outcome, reason),
    acceptBatch: (batchId, options) => acceptBatch(c, batchId, options),
    // the pipeline
    stopCurrency: (currency, detail, at) => stopCurrency(c, currency, detail, at),
    batchCorridors: (batchId) => batchCorridors(c, batchId),
    endReadyRowsOfCorridor: (batchId, corridor, outcome, detail) => endReadyRowsOfCorridor(c, batchId, corridor, outcome, detail),
    dueReads: (now, limit) => dueReads(c, now, limit),
    catchUpReads: (heardBefore, now) => catchUpReads(c, heardBefore, now),
    metricsFigures: (recentSince) => metricsFigures(c, recentSince),
    // the workspace lease, the audit trail, the outbox
    acquireLease: (me, isAlive, staleAfterMs) => acquireLease(c, me, isAlive, staleAfterMs),
    appendAudit: (entry) => appendAudit(c, entry),
    claimDueNotifications: (now, claimUntil, limit) => claimDueNotifications(c, now, claimUntil, limit),
  };
}
