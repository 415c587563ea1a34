/**
 * The pipeline's queries that are SQLite's own: transactions of several
 * statements (synchronous, so atomic), reads planned by a named index, and
 * work done in chunks so that the rest of the process is served in between.
 */
import { REASONS } from '../../payout-states.js';
import { SQLITE_CORRIDORS } from '../corridor-sql.js';
import type { CountAndOldest, RowCount } from '../metrics-figures.js';
import { AWAITING_SQL, ROWS_SQL, attentionSql, metricsFigures as figures } from '../metrics-figures.js';
import type { BatchCorridor, MetricsFigures, PipelineRow } from '../port.js';
import type { PipelineColumns } from '../queries/pipeline.js';
import { OPEN_BATCHES, PIPELINE_SQL, toPipelineRow } from '../queries/pipeline.js';
import { FOLLOWED, PIPELINE_COLUMNS } from '../sql-lists.js';
import type { SqliteConnection } from './connection.js';

/** Rows given a catch-up read per statement. */
const CATCH_UP_CHUNK = 5000;

export async function stopCurrency(c: SqliteConnection, currency: string, detail: string, at: string): Promise<{ batches: number; notSent: number }> {
  return c.atomic(() => {
    const batches = c.sql(PIPELINE_SQL.stopFunding).run(currency, detail, at).changes;
    const notSent = c.sql(PIPELINE_SQL.endStopped).run(REASONS.insufficientFunds, `not sent: ${detail}`, currency, currency).changes;
    return { batches, notSent };
  });
}

export async function batchCorridors(c: SqliteConnection, batchId: string): Promise<BatchCorridor[]> {
  return c.atomic(() => {
    if (c.sql(SQLITE_CORRIDORS.summarised).get(batchId) === undefined) c.sql(SQLITE_CORRIDORS.summariseReady).run(batchId);
    return c.sql(SQLITE_CORRIDORS.withReadyRows).all(batchId) as BatchCorridor[];
  });
}

export async function endReadyRowsOfCorridor(c: SqliteConnection, batchId: string, corridor: Omit<BatchCorridor, 'rows'>, outcome: string, detail: string): Promise<{ line: number; external_id: string }[]> {
  const ended = c.sql(SQLITE_CORRIDORS.endReady)
    .all(outcome, detail, batchId, corridor.input_currency, corridor.output_currency, corridor.type, corridor.country_code) as { line: number; external_id: string }[];
  return ended.sort((a, b) => a.line - b.line);
}

/** Soonest first, by the index of scheduled reads alone (no tie broken: a sort of every due row would follow). */
export async function dueReads(c: SqliteConnection, now: number, limit: number): Promise<PipelineRow[]> {
  return (c.sql(`SELECT ${PIPELINE_COLUMNS} ${PIPELINE_SQL.due} ORDER BY next_read_at LIMIT ?`).all(now, limit) as PipelineColumns[]).map(toPipelineRow);
}

/**
 * In chunks by the index of scheduled reads, each its own statement, the rest
 * of the process served in between: every row in flight may be caught up
 * (a million after a batch was sent), and one update of them all would hold
 * the database for seconds.
 */
export async function catchUpReads(c: SqliteConnection, heardBefore: string, now: number): Promise<number> {
  const chunk = c.sql(`UPDATE rows SET next_read_at = ? WHERE (batch_id, line) IN (SELECT batch_id, line FROM rows INDEXED BY rows_due_reads
    WHERE phase IN ${FOLLOWED} AND next_read_at IS NOT NULL AND next_read_at > ? AND (heard_at IS NULL OR heard_at < ?) AND batch_id IN ${OPEN_BATCHES}
    ORDER BY next_read_at LIMIT ${CATCH_UP_CHUNK})`);
  let caught = 0;
  for (;;) {
    const changed = chunk.run(now, now, heardBefore).changes;
    caught += changed;
    if (changed < CATCH_UP_CHUNK) return caught;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export async function metricsFigures(c: SqliteConnection, recentSince: string): Promise<MetricsFigures> {
  // One read transaction: the three figures are of one moment.
  return c.db.transaction(() => figures(
    c.sql(ROWS_SQL).all() as RowCount[],
    c.sql(AWAITING_SQL).get() as CountAndOldest | undefined,
    c.sql(attentionSql('?')).get(recentSince) as CountAndOldest | undefined,
  ))();
}
