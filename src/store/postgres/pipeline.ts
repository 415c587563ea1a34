/**
 * The pipeline's queries that are PostgreSQL's own: transactions, reads with a
 * tie broken (workers share them), and /metrics' one snapshot.
 */
import { REASONS } from '../../payout-states.js';
import { PG_CORRIDORS } from '../corridor-sql.js';
import type { CountAndOldest, RowCount } from '../metrics-figures.js';
import { AWAITING_SQL, ROWS_SQL, attentionSql, metricsFigures as figures } from '../metrics-figures.js';
import type { BatchCorridor, MetricsFigures, PipelineRow } from '../port.js';
import type { PipelineColumns } from '../queries/pipeline.js';
import { OPEN_BATCHES, PIPELINE_SQL, toPipelineRow } from '../queries/pipeline.js';
import { FOLLOWED, PIPELINE_COLUMNS } from '../sql-lists.js';
import type { PgConnection } from './client.js';

export async function stopCurrency(c: PgConnection, currency: string, detail: string, at: string): Promise<{ batches: number; notSent: number }> {
  return c.tx(async (tx) => {
    const batches = await tx.run(PIPELINE_SQL.stopFunding, [currency, detail, at]);
    const notSent = await tx.run(PIPELINE_SQL.endStopped, [REASONS.insufficientFunds, `not sent: ${detail}`, currency, currency]);
    return { batches, notSent };
  });
}

export async function batchCorridors(c: PgConnection, batchId: string): Promise<BatchCorridor[]> {
  await c.run(PG_CORRIDORS.summariseReady, [batchId]);
  return c.all<BatchCorridor>(PG_CORRIDORS.withReadyRows, [batchId]);
}

export async function endReadyRowsOfCorridor(c: PgConnection, batchId: string, corridor: Omit<BatchCorridor, 'rows'>, outcome: string, detail: string): Promise<{ line: number; external_id: string }[]> {
  const ended = await c.all<{ line: number; external_id: string }>(PG_CORRIDORS.endReady,
    [outcome, detail, batchId, corridor.input_currency, corridor.output_currency, corridor.type, corridor.country_code]);
  return ended.sort((a, b) => a.line - b.line);
}

/** Soonest first, ties broken by batch and line: the order is the same for every worker. */
export async function dueReads(c: PgConnection, now: number, limit: number): Promise<PipelineRow[]> {
  return (await c.all<PipelineColumns>(`SELECT ${PIPELINE_COLUMNS} ${PIPELINE_SQL.due} ORDER BY next_read_at, batch_id, line LIMIT ?`, [now, limit])).map(toPipelineRow);
}

/** One statement: PostgreSQL's writers do not hold each other up as SQLite's one writer would. */
export async function catchUpReads(c: PgConnection, heardBefore: string, now: number): Promise<number> {
  return c.run(`UPDATE rows SET next_read_at = ? WHERE phase IN ${FOLLOWED} AND next_read_at IS NOT NULL AND next_read_at > ?
    AND (heard_at IS NULL OR heard_at < ?) AND batch_id IN ${OPEN_BATCHES}`, [now, now, heardBefore]);
}

export async function metricsFigures(c: PgConnection, recentSince: string): Promise<MetricsFigures> {
  // One snapshot: the three figures are of one moment, whatever the workers commit meanwhile.
  return c.tx(async (tx) => {
    await tx.run('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
    return figures(
      await tx.all<RowCount>(ROWS_SQL),
      await tx.first<CountAndOldest>(AWAITING_SQL),
      await tx.first<CountAndOldest>(attentionSql('?'), [recentSince]),
    );
  });
}
