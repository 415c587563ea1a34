/**
 * The pipeline's part of the PostgreSQL store: the same contract as SQLite's
 * (test/store/contract.ts). A commit locks its row (FOR UPDATE) and applies only
 * at the revision read; a reservation also locks its batch, so that workers
 * funding rows of one batch at once never exceed its budget together. Sums of
 * amounts are numeric: exact.
 */
import { PIPELINE_COLUMNS, RESULT_ROW_COLUMNS } from '../sql-lists.js';
import { PG_CORRIDORS } from '../corridor-sql.js';
import type pg from 'pg';
import type { ResultRow } from '../../reports/results.js';
import { FOLLOWED_PHASES, NEVER_SENT_PHASES, REASONS, UNSETTLED_PHASES } from '../../payout-states.js';
import { phaseList } from '../sql-lists.js';
import type { CountAndOldest, RowCount } from '../metrics-figures.js';
import { AWAITING_SQL, ROWS_SQL, attentionSql, metricsFigures } from '../metrics-figures.js';
import { PgBase } from './base.js';
import type {
  BatchCorridor, BatchProgress, BatchRecord, CommitOutcome, MetricsFigures, MetricsStore, NextRead, ObservationSource, PipelineRow, PipelineStore, RowChanges, RowPatch,
} from '../store.js';

const CHANGEABLE: ReadonlySet<string> = new Set([
  'phase', 'outcome', 'outcome_detail', 'transaction_id', 'state', 'state_reason', 'state_reason_code', 'input_amount', 'input_currency',
  'output_amount', 'output_currency', 'refunded_amount', 'created_at', 'funded_at', 'paid_at', 'refunded_at', 'settled_at', 'observed_at',
  'heard_at', 'next_read_at', 'fund_attempts', 'errors',
]);

const UNSETTLED = phaseList(UNSETTLED_PHASES);
const FOLLOWED = phaseList(FOLLOWED_PHASES);
const OPEN_BATCHES = "(SELECT id FROM batches WHERE status = 'accepted')";
const CHANGE_COUNTER: Record<ObservationSource, string> = { webhook: 'changes_by_webhook', polling: 'changes_by_polling', answer: 'changes_by_answer' };

/** $1, $2, ... from `start`. */
export const params = (values: readonly unknown[], start = 1): string => values.map((_, i) => `$${i + start}`).join(', ');

export interface PipelineColumns extends Omit<PipelineRow, 'request'> {
  request: string;
}
export const toPipelineRow = (row: PipelineColumns): PipelineRow => ({ ...row, request: JSON.parse(row.request) as PipelineRow['request'] });

export class PgPipeline extends PgBase implements PipelineStore, MetricsStore {
  protected constructor(pool: pg.Pool) {
    super(pool);
  }

  async openBatches(): Promise<BatchRecord[]> {
    return this.all<BatchRecord>("SELECT * FROM batches WHERE status = 'accepted' ORDER BY received_at, id");
  }

  async batchReleased(batchId: string): Promise<boolean> {
    return (await this.first<{ released: number }>('SELECT released FROM batches WHERE id = $1', [batchId]))?.released === 1;
  }

  async rowsInPhases(batchId: string, phases: readonly string[], afterLine: number, limit: number, inputCurrency?: string): Promise<PipelineRow[]> {
    const args: unknown[] = [batchId, ...phases];
    let sql = `SELECT ${PIPELINE_COLUMNS} FROM rows WHERE batch_id = $1 AND phase IN (${params(phases, 2)})`;
    if (inputCurrency !== undefined) {
      args.push(inputCurrency);
      sql += ` AND input_currency = $${args.length}`;
    }
    args.push(afterLine, limit);
    sql += ` AND line > $${args.length - 1} ORDER BY line LIMIT $${args.length}`;
    return (await this.all<PipelineColumns>(sql, args)).map(toPipelineRow);
  }

  async allRowsInPhases(phases: readonly string[]): Promise<PipelineRow[]> {
    return (await this.all<PipelineColumns>(`SELECT ${PIPELINE_COLUMNS} FROM rows WHERE phase IN (${params(phases)}) AND batch_id IN ${OPEN_BATCHES} ORDER BY batch_id, line`, phases)).map(toPipelineRow);
  }

  async row(batchId: string, line: number): Promise<PipelineRow | undefined> {
    const row = await this.first<PipelineColumns>(`SELECT ${PIPELINE_COLUMNS} FROM rows WHERE batch_id = $1 AND line = $2`, [batchId, line]);
    return row && toPipelineRow(row);
  }

  async commitRow(batchId: string, line: number, revision: number, patch: RowPatch): Promise<CommitOutcome> {
    try {
      return await this.commitRowOnce(batchId, line, revision, patch);
    } catch (error) {
      // The unique index refused a transaction id another row took in the same instant (another worker).
      if ((error as { code?: string; constraint?: string }).code === '23505' && (error as { constraint?: string }).constraint === 'rows_transaction_id' && patch.changes.transaction_id) {
        const other = await this.first<{ batch_id: string; line: number }>('SELECT batch_id, line FROM rows WHERE transaction_id = $1', [patch.changes.transaction_id]);
        if (other) return { kind: 'taken', ...other };
      }
      throw error;
    }
  }

  private async commitRowOnce(batchId: string, line: number, revision: number, patch: RowPatch): Promise<CommitOutcome> {
    return this.tx(async (c): Promise<CommitOutcome> => {
      const now = await this.first<{ revision: number; state: string | null }>('SELECT revision, state FROM rows WHERE batch_id = $1 AND line = $2 FOR UPDATE', [batchId, line], c);
      if (!now || now.revision !== revision) return { kind: 'moved' };
      const { changes } = patch;
      if (changes.transaction_id) {
        const other = await this.first<{ batch_id: string; line: number }>('SELECT batch_id, line FROM rows WHERE transaction_id = $1 AND NOT (batch_id = $2 AND line = $3) LIMIT 1', [changes.transaction_id, batchId, line], c);
        if (other) return { kind: 'taken', ...other };
      }
      if (patch.reserve) {
        const refusal = await this.reservationRefused(c, batchId, line, patch.reserve);
        if (refusal) return refusal;
      }
      await this.update(c, batchId, line, changes, patch.countRead === true);
      if (patch.learned && changes.state !== undefined && changes.state !== now.state) {
        await c.query(`UPDATE batches SET ${CHANGE_COUNTER[patch.learned]} = ${CHANGE_COUNTER[patch.learned]} + 1 WHERE id = $1`, [batchId]);
      }
      for (const audit of patch.audits ?? []) {
        await this.appendAuditIn(c, { at: audit.at, actor: audit.actor ?? 'paybatch', action: audit.action, subject: `${batchId} line ${line}`, details: audit.details });
      }
      return { kind: 'applied' };
    });
  }

  private async reservationRefused(c: pg.PoolClient, batchId: string, line: number, reserve: NonNullable<RowPatch['reserve']>): Promise<CommitOutcome | null> {
    // The batch row locked: reservations of one batch, by any worker, are decided one at a time.
    await c.query('SELECT 1 FROM batches WHERE id = $1 FOR UPDATE', [batchId]);
    const stop = await this.first<{ detail: string }>('SELECT detail FROM funding_stops WHERE batch_id = $1 AND currency = $2', [batchId, reserve.currency], c);
    if (stop) return { kind: 'stopped', detail: stop.detail };
    if (reserve.budget === null) return null;
    const sum = await this.first<{ total: string }>(`SELECT COALESCE(SUM(input_amount::numeric), 0)::text AS total FROM rows WHERE batch_id = $1 AND input_currency = $2
      AND NOT (batch_id = $1 AND line = $3) AND (phase = 'funding' OR funded_at IS NOT NULL OR (phase = 'held' AND fund_attempts > 0))`, [batchId, reserve.currency, line], c);
    const committed = BigInt((sum?.total ?? '0').split('.')[0] as string);
    return committed + reserve.amount > reserve.budget ? { kind: 'over_budget', committed } : null;
  }

  private async update(c: pg.PoolClient, batchId: string, line: number, changes: RowChanges, countRead: boolean): Promise<void> {
    const columns = Object.keys(changes).filter((column) => CHANGEABLE.has(column)).sort();
    const values = columns.map((column) => {
      const value = (changes as Record<string, unknown>)[column];
      if (column === 'errors') return Array.isArray(value) && value.length > 0 ? JSON.stringify(value) : null;
      return value ?? null;
    });
    const set = [...columns.map((column, i) => `${column} = $${i + 3}`), 'revision = revision + 1', ...(countRead ? ['reads = reads + 1'] : [])].join(', ');
    await c.query(`UPDATE rows SET ${set} WHERE batch_id = $1 AND line = $2`, [batchId, line, ...values]);
  }

  async movePhase(batchId: string, line: number, from: readonly string[], to: string, outcome?: string | null, detail?: string | null): Promise<boolean> {
    if (outcome === undefined) {
      return (await this.run(`UPDATE rows SET phase = $1, revision = revision + 1 WHERE batch_id = $2 AND line = $3 AND phase IN (${params(from, 4)})`, [to, batchId, line, ...from])) === 1;
    }
    return (await this.run(`UPDATE rows SET phase = $1, outcome = $2, outcome_detail = $3, revision = revision + 1 WHERE batch_id = $4 AND line = $5 AND phase IN (${params(from, 6)})`,
      [to, outcome, detail ?? null, batchId, line, ...from])) === 1;
  }

  async stopCurrency(currency: string, detail: string, at: string): Promise<{ batches: number; notSent: number }> {
    return this.tx(async (c) => {
      const batches = await this.run(`INSERT INTO funding_stops (batch_id, currency, detail, stopped_at) SELECT id, $1, $2, $3 FROM batches WHERE status = 'accepted'
        ON CONFLICT (batch_id, currency) DO NOTHING`, [currency, detail, at], c);
      const notSent = await this.run(`UPDATE rows SET phase = 'not_sent', outcome = $1, outcome_detail = $2, revision = revision + 1
        WHERE phase = 'ready' AND input_currency = $3 AND batch_id IN (SELECT batch_id FROM funding_stops WHERE currency = $3) AND batch_id IN ${OPEN_BATCHES}`,
      [REASONS.insufficientFunds, `not sent: ${detail}`, currency], c);
      return { batches, notSent };
    });
  }

  async endReadyRows(batchId: string, outcome: string, detail: string): Promise<number> {
    return this.run("UPDATE rows SET phase = 'not_sent', outcome = $1, outcome_detail = $2, revision = revision + 1 WHERE batch_id = $3 AND phase = 'ready'", [outcome, detail, batchId]);
  }

  async batchCorridors(batchId: string): Promise<BatchCorridor[]> {
    await this.run(PG_CORRIDORS.summariseReady, [batchId]);
    return this.all<BatchCorridor>(PG_CORRIDORS.withReadyRows, [batchId]);
  }

  async endReadyRowsOfCorridor(batchId: string, corridor: Omit<BatchCorridor, 'rows'>, outcome: string, detail: string): Promise<{ line: number; external_id: string }[]> {
    const ended = await this.all<{ line: number; external_id: string }>(PG_CORRIDORS.endReady,
      [outcome, detail, batchId, corridor.input_currency, corridor.output_currency, corridor.type, corridor.country_code]);
    return ended.sort((a, b) => a.line - b.line);
  }

  async scheduleRead(batchId: string, line: number, nextReadAt: number, counted: boolean): Promise<void> {
    await this.run('UPDATE rows SET next_read_at = $1, reads = reads + $2 WHERE batch_id = $3 AND line = $4', [nextReadAt, counted ? 1 : 0, batchId, line]);
  }

  async dueReads(now: number, limit: number): Promise<PipelineRow[]> {
    return (await this.all<PipelineColumns>(`SELECT ${PIPELINE_COLUMNS} FROM rows WHERE phase IN ${FOLLOWED} AND next_read_at IS NOT NULL AND next_read_at <= $1
      AND batch_id IN ${OPEN_BATCHES} ORDER BY next_read_at, batch_id, line LIMIT $2`, [now, limit])).map(toPipelineRow);
  }

  async scheduleOrphans(now: number): Promise<number> {
    return this.run(`UPDATE rows SET next_read_at = $1 WHERE phase IN ${FOLLOWED} AND next_read_at IS NULL AND batch_id IN ${OPEN_BATCHES}`, [now]);
  }

  async catchUpReads(heardBefore: string, now: number): Promise<number> {
    return this.run(`UPDATE rows SET next_read_at = $1 WHERE phase IN ${FOLLOWED} AND next_read_at IS NOT NULL AND next_read_at > $1
      AND (heard_at IS NULL OR heard_at < $2) AND batch_id IN ${OPEN_BATCHES}`, [now, heardBefore]);
  }

  async nextReads(batchId: string, limit: number): Promise<NextRead[]> {
    return this.all<NextRead>(`SELECT line, external_id, phase, state, next_read_at FROM rows WHERE batch_id = $1 AND phase IN ${UNSETTLED}
      ORDER BY next_read_at IS NULL, next_read_at, line LIMIT $2`, [batchId, limit]);
  }

  async unsettledRows(batchId: string): Promise<number> {
    return (await this.first<{ n: number }>(`SELECT COUNT(*)::int AS n FROM rows WHERE batch_id = $1 AND phase IN ${UNSETTLED}`, [batchId]))?.n ?? 0;
  }

  async settleBatch(batchId: string, at: string): Promise<void> {
    await this.run("UPDATE batches SET status = 'settled', settled_at = $1 WHERE id = $2 AND status = 'accepted'", [at, batchId]);
  }

  async *resultRows(batchId: string): AsyncIterable<ResultRow> {
    for (let after = 0; ; ) {
      const rows = await this.all<ResultRow>(`SELECT ${RESULT_ROW_COLUMNS} FROM rows WHERE batch_id = $1 AND line > $2 ORDER BY line LIMIT 1000`, [batchId, after]);
      if (rows.length === 0) return;
      yield* rows;
      after = (rows[rows.length - 1] as ResultRow).line;
    }
  }

  async rowByTransaction(transactionId: string): Promise<PipelineRow | undefined> {
    const row = await this.first<PipelineColumns>(`SELECT ${PIPELINE_COLUMNS} FROM rows WHERE transaction_id = $1 LIMIT 1`, [transactionId]);
    return row && toPipelineRow(row);
  }

  async rowBySubmittedExternalId(externalId: string): Promise<PipelineRow | undefined> {
    const row = await this.first<PipelineColumns>(`SELECT ${PIPELINE_COLUMNS} FROM rows WHERE external_id = $1 AND phase NOT IN ${phaseList(NEVER_SENT_PHASES)}`, [externalId]);
    return row && toPipelineRow(row);
  }

  async progress(batchId: string): Promise<BatchProgress> {
    return (await this.first<BatchProgress>(`SELECT
        (COUNT(*) FILTER (WHERE r.phase NOT IN ('checking', 'invalid', 'refused')))::int AS sendable,
        COUNT(r.transaction_id)::int AS created,
        COUNT(r.funded_at)::int AS funded,
        (COUNT(*) FILTER (WHERE r.phase IN ('final', 'not_sent', 'held')))::int AS settled,
        (COUNT(*) FILTER (WHERE r.phase IN ${UNSETTLED}))::int AS unsettled,
        MIN(CASE WHEN r.phase IN ${UNSETTLED} THEN COALESCE(r.created_at, b.received_at) END) AS oldest_unsettled_at
      FROM rows r JOIN batches b ON b.id = r.batch_id WHERE r.batch_id = $1`, [batchId])) as BatchProgress;
  }

  async recentBatches(since: string): Promise<BatchRecord[]> {
    return this.all<BatchRecord>("SELECT * FROM batches WHERE status IN ('intake', 'accepted') OR received_at >= $1 ORDER BY received_at DESC, id DESC", [since]);
  }

  async rowsWaitingOnSender(senderExternalId: string): Promise<PipelineRow[]> {
    return (await this.all<PipelineColumns>(`SELECT ${PIPELINE_COLUMNS} FROM rows WHERE batch_id IN ${OPEN_BATCHES}
      AND phase = 'created' AND state IN ('initial', 'verified') AND (request::jsonb #>> '{sender,external_id}') = $1 ORDER BY batch_id, line`, [senderExternalId])).map(toPipelineRow);
  }

  async recordHeartbeat(name: string, at: number): Promise<void> {
    await this.run('INSERT INTO heartbeats (name, at) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET at = excluded.at', [name, at]);
  }

  async lastHeartbeat(name: string): Promise<number | null> {
    return (await this.first<{ at: number }>('SELECT at FROM heartbeats WHERE name = $1', [name]))?.at ?? null;
  }

  async metricsFigures(recentSince: string): Promise<MetricsFigures> {
    // One snapshot: the three figures are of one moment, whatever the workers commit meanwhile.
    return this.tx(async (c) => {
      await c.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
      return metricsFigures(
        await this.all<RowCount>(ROWS_SQL, [], c),
        await this.first<CountAndOldest>(AWAITING_SQL, [], c),
        await this.first<CountAndOldest>(attentionSql('$1'), [recentSince], c),
      );
    });
  }
}
