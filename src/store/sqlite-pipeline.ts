/**
 * The pipeline's part of the SQLite store: rows read for a decision, and the
 * decision applied by compare-and-set on the row's revision (STYLE 13), with the
 * funding reservation checked in the same transaction. The rules themselves
 * (which observation is newer, what to do next) are the engine's.
 */
import { PIPELINE_COLUMNS, RESULT_ROW_COLUMNS } from './sql-lists.js';
import { SQLITE_CORRIDORS } from './corridor-sql.js';
import type { ResultRow } from '../reports/results.js';
import { FOLLOWED_PHASES, NEVER_SENT_PHASES, REASONS, UNSETTLED_PHASES } from '../payout-states.js';
import type { SqliteDatabase } from './database.js';
import { SqliteBase, marks } from './sqlite-base.js';
import { phaseList } from './sql-lists.js';
import type { CountAndOldest, RowCount } from './metrics-figures.js';
import { AWAITING_SQL, ROWS_SQL, attentionSql, metricsFigures } from './metrics-figures.js';
import type {
  BatchCorridor, BatchProgress, BatchRecord, CommitOutcome, MetricsFigures, MetricsStore, NextRead, ObservationSource, PipelineRow, PipelineStore, RowChanges, RowPatch, RowSeen,
} from './store.js';

/** The columns a patch may set, so that no other name ever reaches the SQL. */
const CHANGEABLE: readonly string[] = [
  'phase', 'outcome', 'outcome_detail', 'transaction_id', 'state', 'state_reason', 'state_reason_code', 'input_amount', 'input_currency',
  'output_amount', 'output_currency', 'refunded_amount', 'created_at', 'funded_at', 'paid_at', 'refunded_at', 'settled_at', 'observed_at',
  'heard_at', 'next_read_at', 'fund_attempts', 'errors',
];

/**
 * What a commit takes from the row as it stands (RowSeen): the columns the indexes of rows depend on, and the state.
 * Not the next read's time, which a scheduled read moves without a revision of its own, and which nothing decides from.
 */
const SEEN_COLUMNS = ['phase', 'state', 'transaction_id', 'funded_at'] as const;
type Believed = { [column in (typeof SEEN_COLUMNS)[number]]: RowSeen[column] };
const isSeen = (column: string): column is keyof Believed => (SEEN_COLUMNS as readonly string[]).includes(column);
/** The row still holds what the commit took from it. */
const AS_SEEN = SEEN_COLUMNS.map((column) => `${column} IS ?`).join(' AND ');
/** The caller's copy, its missing values as the database gives them (null). */
const believed = (seen: RowSeen): Believed => ({
  phase: seen.phase, state: seen.state ?? null, transaction_id: seen.transaction_id ?? null, funded_at: seen.funded_at ?? null,
});

const UNSETTLED = phaseList(UNSETTLED_PHASES);
/** Rows given a catch-up read per statement. */
const CATCH_UP_CHUNK = 5000;
const FOLLOWED = phaseList(FOLLOWED_PHASES);
const OPEN_BATCHES = "(SELECT id FROM batches WHERE status = 'accepted')";

const CHANGE_COUNTER: Record<ObservationSource, string> = { webhook: 'changes_by_webhook', polling: 'changes_by_polling', answer: 'changes_by_answer' };
const SOURCES = Object.keys(CHANGE_COUNTER) as ObservationSource[];
/** A group's counts of state changes added to one batch's, in the order of SOURCES. */
const ADD_CHANGES = `UPDATE batches SET ${SOURCES.map((source) => `${CHANGE_COUNTER[source]} = ${CHANGE_COUNTER[source]} + ?`).join(', ')} WHERE id = ?`;

interface PipelineColumns extends Omit<PipelineRow, 'request'> {
  request: string;
}

const toPipelineRow = (row: PipelineColumns): PipelineRow => ({ ...row, request: JSON.parse(row.request) as PipelineRow['request'] });

export class SqlitePipeline extends SqliteBase implements PipelineStore, MetricsStore {
  protected constructor(db: SqliteDatabase) {
    super(db);
  }

  async openBatches(): Promise<BatchRecord[]> {
    return this.sql("SELECT * FROM batches WHERE status = 'accepted' ORDER BY received_at, id").all() as BatchRecord[];
  }

  async batchReleased(batchId: string): Promise<boolean> {
    return this.sql('SELECT released FROM batches WHERE id = ?').pluck().get(batchId) === 1;
  }

  async rowsInPhases(batchId: string, phases: readonly string[], afterLine: number, limit: number, inputCurrency?: string): Promise<PipelineRow[]> {
    const currency = inputCurrency === undefined ? '' : ' AND input_currency = ?';
    const rows = this.sql(`SELECT ${PIPELINE_COLUMNS} FROM rows WHERE batch_id = ? AND phase IN (${marks(phases)})${currency} AND line > ? ORDER BY line LIMIT ?`)
      .all(batchId, ...phases, ...(inputCurrency === undefined ? [] : [inputCurrency]), afterLine, limit) as PipelineColumns[];
    return rows.map(toPipelineRow);
  }

  async allRowsInPhases(phases: readonly string[]): Promise<PipelineRow[]> {
    // By the index of phases: SQLite (no statistics here) would otherwise walk every row of the open batches in order.
    const rows = this.sql(`SELECT ${PIPELINE_COLUMNS} FROM rows INDEXED BY rows_batch_phase WHERE batch_id IN ${OPEN_BATCHES} AND phase IN (${marks(phases)})
      ORDER BY batch_id, line`).all(...phases) as PipelineColumns[];
    return rows.map(toPipelineRow);
  }

  async row(batchId: string, line: number): Promise<PipelineRow | undefined> {
    const row = this.sql(`SELECT ${PIPELINE_COLUMNS} FROM rows WHERE batch_id = ? AND line = ?`).get(batchId, line) as PipelineColumns | undefined;
    return row && toPipelineRow(row);
  }

  async commitRow(batchId: string, line: number, revision: number, patch: RowPatch, seen?: RowSeen): Promise<CommitOutcome> {
    // Rows in flight together commit together (see atomicInGroup); each is still compared and set on its own.
    return this.atomicInGroup((): CommitOutcome => {
      // The row as the caller read it, or as read here. What is taken from it is checked by the update itself (its
      // WHERE), so a caller's copy that is out of date moves nothing: the commit is refused as moved, as if read here.
      const before = seen ? believed(seen) : this.readBelieved(batchId, line, revision);
      if (!before) return { kind: 'moved' };
      const { changes } = patch;
      const refusal = this.refusal(batchId, line, changes, before, patch.reserve);
      // A refusal is for the row as it stands: one that has moved (or is not as the caller saw it) is told so first.
      if (refusal) return seen && !this.stillAsSeen(batchId, line, revision, before) ? { kind: 'moved' } : refusal;
      if (!this.update(batchId, line, revision, changes, before, patch.countRead === true)) return { kind: 'moved' };
      for (const audit of patch.audits ?? []) {
        this.appendAuditNow({ at: audit.at, actor: audit.actor ?? 'paybatch', action: audit.action, subject: `${batchId} line ${line}`, details: audit.details });
      }
      // Counted last, once nothing here can fail: the count is applied with the group (endGroup), or not at all.
      if (patch.learned && changes.state !== undefined && changes.state !== before.state) this.countChange(batchId, patch.learned);
      return { kind: 'applied' };
    });
  }

  /** Why the change may not be made: its transaction is another row's, or the reservation for funding is refused. */
  private refusal(batchId: string, line: number, changes: RowChanges, before: Believed, reserve: RowPatch['reserve']): CommitOutcome | null {
    // A row that already holds this transaction was checked when it took it.
    if (changes.transaction_id && changes.transaction_id !== before.transaction_id) {
      // One transaction, one row: an answer naming a transaction another row holds is not adopted twice.
      const other = this.sql('SELECT batch_id, line FROM rows WHERE transaction_id = ? AND NOT (batch_id = ? AND line = ?) LIMIT 1')
        .get(changes.transaction_id, batchId, line) as { batch_id: string; line: number } | undefined;
      if (other) return { kind: 'taken', ...other };
    }
    return reserve ? this.reservationRefused(batchId, line, reserve) : null;
  }

  /** What the commit takes from the row, read; undefined when the row is not at `revision`. */
  private readBelieved(batchId: string, line: number, revision: number): Believed | undefined {
    const read = this.sql(`SELECT revision, ${SEEN_COLUMNS.join(', ')} FROM rows WHERE batch_id = ? AND line = ?`).get(batchId, line) as
      (Believed & { revision: number }) | undefined;
    return read?.revision === revision ? read : undefined;
  }

  private stillAsSeen(batchId: string, line: number, revision: number, before: Believed): boolean {
    return this.sql(`SELECT 1 FROM rows WHERE batch_id = ? AND line = ? AND revision = ? AND ${AS_SEEN}`).get(batchId, line, revision, ...SEEN_COLUMNS.map((c) => before[c])) !== undefined;
  }

  /** State changes learned in the group commit under way, by batch and source: one update a batch for the group, not one a row. */
  private changesLearned = new Map<string, Record<ObservationSource, number>>();

  private countChange(batchId: string, source: ObservationSource): void {
    let counts = this.changesLearned.get(batchId);
    if (!counts) {
      counts = { webhook: 0, polling: 0, answer: 0 };
      this.changesLearned.set(batchId, counts);
    }
    counts[source] += 1;
  }

  protected override groupUndone(): void {
    this.changesLearned = new Map();
  }

  protected override endGroup(): void {
    if (this.changesLearned.size === 0) return;
    const learned = this.changesLearned;
    this.changesLearned = new Map();
    for (const [batchId, counts] of learned) this.sql(ADD_CHANGES).run(...SOURCES.map((source) => counts[source]), batchId);
  }

  /** The balance of the currency ran out for this batch, or its budget would be exceeded: what was already committed says. */
  private reservationRefused(batchId: string, line: number, reserve: NonNullable<RowPatch['reserve']>): CommitOutcome | null {
    const stop = this.sql('SELECT detail FROM funding_stops WHERE batch_id = ? AND currency = ?').pluck().get(batchId, reserve.currency) as string | undefined;
    if (stop !== undefined) return { kind: 'stopped', detail: stop };
    if (reserve.budget === null) return null;
    // Integer arithmetic in SQLite, read as bigint: exact. Funded rows count, refunded or not, cancelling ones included; so
    // does a row held after a funding call was sent for it: whether that debit happened is for a person to find out.
    const committed = (this.sql(`SELECT COALESCE(SUM(CAST(input_amount AS INTEGER)), 0) FROM rows WHERE batch_id = ? AND input_currency = ?
      AND NOT (batch_id = ? AND line = ?) AND (phase = 'funding' OR funded_at IS NOT NULL OR (phase = 'held' AND fund_attempts > 0))`).pluck().safeIntegers(true)
      .get(batchId, reserve.currency, batchId, line)) as bigint;
    return committed + reserve.amount > reserve.budget ? { kind: 'over_budget', committed } : null;
  }

  /** Applies the changes if the row is still at `revision` and as `before` says; false when it is not (nothing changed). */
  private update(batchId: string, line: number, revision: number, changes: RowChanges, before: Believed, countRead: boolean): boolean {
    // In CHANGEABLE's order: the same columns always make the same statement, compiled once (and nothing sorted a row).
    // A column an index depends on is left out when it keeps its value: SQLite rewrites an index entry whenever the
    // update names a column of it, and a transaction id names a random page of its index (one more page a commit).
    const unchanged = (column: string): boolean => isSeen(column) && ((changes as Record<string, unknown>)[column] ?? null) === before[column];
    const columns = CHANGEABLE.filter((column) => column in changes && !unchanged(column));
    const values = columns.map((column) => {
      const value = (changes as Record<string, unknown>)[column];
      if (column === 'errors') return Array.isArray(value) && value.length > 0 ? JSON.stringify(value) : null;
      return value ?? null;
    });
    const set = [...columns.map((column) => `${column} = ?`), 'revision = revision + 1', ...(countRead ? ['reads = reads + 1'] : [])].join(', ');
    return this.sql(`UPDATE rows SET ${set} WHERE batch_id = ? AND line = ? AND revision = ? AND ${AS_SEEN}`)
      .run(...values, batchId, line, revision, ...SEEN_COLUMNS.map((column) => before[column])).changes === 1;
  }

  async movePhase(batchId: string, line: number, from: readonly string[], to: string, outcome?: string | null, detail?: string | null): Promise<boolean> {
    const set = outcome === undefined ? '' : ', outcome = ?, outcome_detail = ?';
    const args = outcome === undefined ? [to, batchId, line, ...from] : [to, outcome, detail ?? null, batchId, line, ...from];
    return this.sql(`UPDATE rows SET phase = ?${set}, revision = revision + 1 WHERE batch_id = ? AND line = ? AND phase IN (${marks(from)})`).run(...args).changes === 1;
  }

  async stopCurrency(currency: string, detail: string, at: string): Promise<{ batches: number; notSent: number }> {
    return this.atomic(() => {
      const batches = this.sql(`INSERT INTO funding_stops (batch_id, currency, detail, stopped_at) SELECT id, ?, ?, ? FROM batches WHERE status = 'accepted'
        ON CONFLICT (batch_id, currency) DO NOTHING`).run(currency, detail, at).changes;
      const notSent = this.sql(`UPDATE rows SET phase = 'not_sent', outcome = ?, outcome_detail = ?, revision = revision + 1
        WHERE phase = 'ready' AND input_currency = ? AND batch_id IN (SELECT batch_id FROM funding_stops WHERE currency = ?) AND batch_id IN ${OPEN_BATCHES}`)
        .run(REASONS.insufficientFunds, `not sent: ${detail}`, currency, currency).changes;
      return { batches, notSent };
    });
  }

  async endReadyRows(batchId: string, outcome: string, detail: string): Promise<number> {
    return this.sql("UPDATE rows SET phase = 'not_sent', outcome = ?, outcome_detail = ?, revision = revision + 1 WHERE batch_id = ? AND phase = 'ready'")
      .run(outcome, detail, batchId).changes;
  }

  async batchCorridors(batchId: string): Promise<BatchCorridor[]> {
    return this.atomic(() => {
      if (this.sql(SQLITE_CORRIDORS.summarised).get(batchId) === undefined) this.sql(SQLITE_CORRIDORS.summariseReady).run(batchId);
      return this.sql(SQLITE_CORRIDORS.withReadyRows).all(batchId) as BatchCorridor[];
    });
  }

  async endReadyRowsOfCorridor(batchId: string, corridor: Omit<BatchCorridor, 'rows'>, outcome: string, detail: string): Promise<{ line: number; external_id: string }[]> {
    const ended = this.sql(SQLITE_CORRIDORS.endReady)
      .all(outcome, detail, batchId, corridor.input_currency, corridor.output_currency, corridor.type, corridor.country_code) as { line: number; external_id: string }[];
    return ended.sort((a, b) => a.line - b.line);
  }

  async scheduleRead(batchId: string, line: number, nextReadAt: number, counted: boolean): Promise<void> {
    this.sql('UPDATE rows SET next_read_at = ?, reads = reads + ? WHERE batch_id = ? AND line = ?').run(nextReadAt, counted ? 1 : 0, batchId, line);
  }

  async dueReads(now: number, limit: number): Promise<PipelineRow[]> {
    const rows = this.sql(`SELECT ${PIPELINE_COLUMNS} FROM rows WHERE phase IN ${FOLLOWED} AND next_read_at IS NOT NULL AND next_read_at <= ?
      AND batch_id IN ${OPEN_BATCHES} ORDER BY next_read_at LIMIT ?`).all(now, limit) as PipelineColumns[];
    return rows.map(toPipelineRow);
  }

  async scheduleOrphans(now: number): Promise<number> {
    return this.sql(`UPDATE rows INDEXED BY rows_unscheduled SET next_read_at = ? WHERE phase IN ${FOLLOWED} AND next_read_at IS NULL AND batch_id IN ${OPEN_BATCHES}`).run(now).changes;
  }

  /**
   * In chunks by the index of scheduled reads, each its own statement, the rest
   * of the process served in between: every row in flight may be caught up
   * (a million after a batch was sent), and one update of them all would hold
   * the database for seconds.
   */
  async catchUpReads(heardBefore: string, now: number): Promise<number> {
    const chunk = this.sql(`UPDATE rows SET next_read_at = ? WHERE (batch_id, line) IN (SELECT batch_id, line FROM rows INDEXED BY rows_due_reads
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

  async nextReads(batchId: string, limit: number): Promise<NextRead[]> {
    return this.sql(`SELECT line, external_id, phase, state, next_read_at FROM rows WHERE batch_id = ? AND phase IN ${UNSETTLED}
      ORDER BY next_read_at IS NULL, next_read_at, line LIMIT ?`).all(batchId, limit) as NextRead[];
  }

  async unsettledRows(batchId: string): Promise<number> {
    return this.sql(`SELECT COUNT(*) FROM rows WHERE batch_id = ? AND phase IN ${UNSETTLED}`).pluck().get(batchId) as number;
  }

  async settleBatch(batchId: string, at: string): Promise<void> {
    this.sql("UPDATE batches SET status = 'settled', settled_at = ? WHERE id = ? AND status = 'accepted'").run(at, batchId);
  }

  async *resultRows(batchId: string): AsyncIterable<ResultRow> {
    const page = this.sql(`SELECT ${RESULT_ROW_COLUMNS} FROM rows WHERE batch_id = ? AND line > ? ORDER BY line LIMIT 1000`);
    for (let after = 0; ; ) {
      const rows = page.all(batchId, after) as ResultRow[];
      if (rows.length === 0) return;
      yield* rows;
      after = (rows[rows.length - 1] as ResultRow).line;
    }
  }

  async rowByTransaction(transactionId: string): Promise<PipelineRow | undefined> {
    const row = this.sql(`SELECT ${PIPELINE_COLUMNS} FROM rows WHERE transaction_id = ? LIMIT 1`).get(transactionId) as PipelineColumns | undefined;
    return row && toPipelineRow(row);
  }

  async rowBySubmittedExternalId(externalId: string): Promise<PipelineRow | undefined> {
    const row = this.sql(`SELECT ${PIPELINE_COLUMNS} FROM rows WHERE external_id = ? AND phase NOT IN ${phaseList(NEVER_SENT_PHASES)}`)
      .get(externalId) as PipelineColumns | undefined;
    return row && toPipelineRow(row);
  }

  async progress(batchId: string): Promise<BatchProgress> {
    return this.sql(`SELECT
        COUNT(*) FILTER (WHERE r.phase NOT IN ('checking', 'invalid', 'refused')) AS sendable,
        COUNT(r.transaction_id) AS created,
        COUNT(r.funded_at) AS funded,
        COUNT(*) FILTER (WHERE r.phase IN ('final', 'not_sent', 'held')) AS settled,
        COUNT(*) FILTER (WHERE r.phase IN ${UNSETTLED}) AS unsettled,
        MIN(CASE WHEN r.phase IN ${UNSETTLED} THEN COALESCE(r.created_at, b.received_at) END) AS oldest_unsettled_at
      FROM rows r JOIN batches b ON b.id = r.batch_id WHERE r.batch_id = ?`).get(batchId) as BatchProgress;
  }

  async recentBatches(since: string): Promise<BatchRecord[]> {
    return this.sql("SELECT * FROM batches WHERE status IN ('intake', 'accepted') OR received_at >= ? ORDER BY received_at DESC, id DESC").all(since) as BatchRecord[];
  }

  async rowsWaitingOnSender(senderExternalId: string): Promise<PipelineRow[]> {
    // By the index of phases: SQLite would otherwise read the open batches whole by their key, every row's request
    // parsed (0.7 s a sender.approved event on a million rows, the daemon deaf to webhooks meanwhile).
    const rows = this.sql(`SELECT ${PIPELINE_COLUMNS} FROM rows INDEXED BY rows_batch_phase WHERE batch_id IN ${OPEN_BATCHES}
      AND phase = 'created' AND state IN ('initial', 'verified') AND json_extract(request, '$.sender.external_id') = ? ORDER BY batch_id, line`)
      .all(senderExternalId) as PipelineColumns[];
    return rows.map(toPipelineRow);
  }

  async recordHeartbeat(name: string, at: number): Promise<void> {
    this.sql('INSERT INTO heartbeats (name, at) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET at = excluded.at').run(name, at);
  }

  async lastHeartbeat(name: string): Promise<number | null> {
    return (this.sql('SELECT at FROM heartbeats WHERE name = ?').pluck().get(name) as number | undefined) ?? null;
  }

  async metricsFigures(recentSince: string): Promise<MetricsFigures> {
    // One read transaction: the three figures are of one moment.
    return this.db.transaction(() => metricsFigures(
      this.sql(ROWS_SQL).all() as RowCount[],
      this.sql(AWAITING_SQL).get() as CountAndOldest | undefined,
      this.sql(attentionSql('?')).get(recentSince) as CountAndOldest | undefined,
    ))();
  }
}
