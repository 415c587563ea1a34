/**
 * The read behind /metrics, the same SQL on both databases: three aggregates
 * (GROUP BY and MIN over the rows_batch_phase index), whatever the number of
 * rows settled long ago. Open batches are those in intake or accepted.
 */
import { ATTENTION_STATES } from '../payout-states.js';
import { HELD_OR_UNSETTLED, IN_PROCESSING, phaseList } from './sql-lists.js';
import type { MetricsFigures } from './port.js';


/** Rows of open batches by phase, and the final ones by the service's state (paybatch's outcome when it ended the row without one). */
export const ROWS_SQL = `SELECT r.phase AS phase, CASE WHEN r.phase = 'final' THEN COALESCE(r.state, r.outcome, 'unknown') END AS final_state, COUNT(*) AS n
  FROM batches b JOIN rows r ON r.batch_id = b.id WHERE b.status IN ${IN_PROCESSING} GROUP BY r.phase, final_state`;

export const AWAITING_SQL = `SELECT COUNT(*) AS n, MIN(received_at) AS oldest FROM batches WHERE approval = 'awaiting' AND status IN ${IN_PROCESSING}`;

/**
 * Rows held or in an attention state, of open batches and of those received
 * since the parameter (held rows do not keep a batch open). An attention state
 * is never final, so only held and unsettled phases are looked at: index seeks.
 * The age runs from the row's last observed change.
 */
export const attentionSql = (since: string): string => `SELECT COUNT(*) AS n, MIN(COALESCE(r.observed_at, r.heard_at, r.created_at, b.received_at)) AS oldest
  FROM batches b JOIN rows r ON r.batch_id = b.id
  WHERE (b.status IN ${IN_PROCESSING} OR b.received_at >= ${since}) AND r.phase IN ${HELD_OR_UNSETTLED}
    AND (r.phase = 'held' OR r.state IN ${phaseList(ATTENTION_STATES)})`;

export interface RowCount {
  phase: string;
  final_state: string | null;
  n: number;
}

export interface CountAndOldest {
  n: number;
  oldest: string | null;
}

export function metricsFigures(rows: readonly RowCount[], awaiting: CountAndOldest | undefined, attention: CountAndOldest | undefined): MetricsFigures {
  const rowsByPhase: Record<string, number> = {};
  const finalByState: Record<string, number> = {};
  for (const { phase, final_state: state, n } of rows) {
    rowsByPhase[phase] = (rowsByPhase[phase] ?? 0) + Number(n);
    if (state !== null) finalByState[state] = (finalByState[state] ?? 0) + Number(n);
  }
  return {
    rows_by_phase: rowsByPhase,
    final_by_state: finalByState,
    awaiting_approval: Number(awaiting?.n ?? 0),
    oldest_awaiting_at: awaiting?.oldest ?? null,
    attention: Number(attention?.n ?? 0),
    oldest_attention_at: attention?.oldest ?? null,
  };
}
