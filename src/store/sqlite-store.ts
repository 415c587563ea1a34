/** The SQLite implementation of the store: better-sqlite3, synchronous, so each method is atomic. */
import type { PayoutRequest } from '../batch/payout-request.js';
import type { Issue } from '../validate/issue.js';
import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from './database.js';
import { migrate, openDatabase } from './database.js';
import { MIGRATIONS } from './migrations.js';
import type { ResultRow } from '../reports/results.js';
import type {
  BatchRecord, IntakeStore, NewRow, Observation, ObservationSource, PipelineRow, PipelineStore, Reservation, RowRecord,
  BatchProgress, ReportScope, ReportStore, ScheduleStore, WebhookEvent, WebhookEventCounts, WebhookStore,
} from './store.js';
import type { LedgerRow } from '../reports/reconciliation.js';

interface RowColumns {
  batch_id: string;
  line: number;
  external_id: string | null;
  phase: string;
  outcome: string | null;
  errors: string | null;
  request: string | null;
}

/** States in the order a transaction moves through them; an older observation never moves a row back [3.1]. */
const STATE_RANK: Record<string, number> = {
  initial: 0, verified: 1, approved: 2, pending: 3, mispaid: 4, received: 4, processing: 5,
  error: 6, manual: 6, exception: 6, stuck: 6, paid: 9, canceled: 8, refunded: 9,
};

const PIPELINE_COLUMNS = 'batch_id, line, external_id, request, phase, outcome, transaction_id, state, input_amount, input_currency, created_at, funded_at, observed_at, reads';

/** Phases of a row that is not final yet, as SQL. */
const UNSETTLED_PHASES = "('ready', 'creating', 'created', 'funding', 'funded', 'cancelling')";

const CHANGE_COUNTER: Record<ObservationSource, string> = { webhook: 'changes_by_webhook', polling: 'changes_by_polling', answer: 'changes_by_answer' };

interface PipelineColumns extends Omit<PipelineRow, 'request'> {
  request: string;
}

const toPipelineRow = (row: PipelineColumns): PipelineRow => ({ ...row, request: JSON.parse(row.request) as PipelineRow['request'] });

export class SqliteStore implements IntakeStore, PipelineStore, WebhookStore, ScheduleStore, ReportStore {
  private readonly statements = new Map<string, Statement>();
  /** One transaction wrapper, built once: better-sqlite3 builds new closures on every `db.transaction()`. */
  private readonly runAtomically: (work: () => unknown) => unknown;

  private constructor(private readonly db: SqliteDatabase) {
    // BEGIN IMMEDIATE: a transaction that reads, then writes, takes the write lock first. A
    // deferred one would fail at once with SQLITE_BUSY (no waiting) when another process (cancel
    // beside watch) wrote in between; immediate ones wait their turn under busy_timeout.
    this.runAtomically = db.transaction((work: () => unknown) => work()).immediate;
  }

  /** Each statement is compiled once: compiling is most of the cost of a small query. */
  private sql(text: string): Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  private atomic<T>(work: () => T): T {
    return this.runAtomically(work) as T;
  }

  static open(file: string): SqliteStore {
    const db = openDatabase(file);
    migrate(db, MIGRATIONS);
    return new SqliteStore(db);
  }

  async acceptedBatchWithContent(sha256: string): Promise<BatchRecord | undefined> {
    return this.sql("SELECT * FROM batches WHERE sha256 = ? AND status IN ('accepted', 'settled') ORDER BY received_at LIMIT 1").get(sha256) as BatchRecord | undefined;
  }

  async beginBatch(batch: Pick<BatchRecord, 'file_name' | 'sha256' | 'size_bytes' | 'policy' | 'received_at'>): Promise<string> {
    return this.atomic(() => {
      const stem = `B${batch.received_at.slice(0, 10).replace(/-/g, '')}-${batch.sha256.slice(0, 8)}`;
      let id = stem;
      for (let n = 2; this.sql('SELECT 1 FROM batches WHERE id = ?').get(id); n++) id = `${stem}-${n}`;
      this.sql(`INSERT INTO batches (id, file_name, sha256, size_bytes, status, policy, received_at)
        VALUES (@id, @file_name, @sha256, @size_bytes, 'intake', @policy, @received_at)`).run({ id, ...batch });
      return id;
    });
  }

  async addRows(batchId: string, rows: readonly NewRow[]): Promise<void> {
    const insert = this.sql(`INSERT INTO rows (batch_id, line, external_id, request, phase, errors, output_amount, output_currency)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
    this.atomic(() => {
      for (const row of rows) {
        insert.run(
          batchId,
          row.line,
          row.external_id,
          row.request ? JSON.stringify(row.request) : null,
          row.request ? 'checking' : 'invalid',
          row.errors.length > 0 ? JSON.stringify(row.errors) : null,
          row.request?.output_amount_in_cents ?? null,
          row.request?.output_currency_code ?? null,
        );
      }
      this.sql('UPDATE batches SET rows_total = rows_total + ? WHERE id = ?').run(rows.length, batchId);
    });
  }

  async invalidateRow(batchId: string, line: number, error: Issue): Promise<void> {
    this.atomic(() => {
      const row = this.sql('SELECT errors FROM rows WHERE batch_id = ? AND line = ?').get(batchId, line) as { errors: string | null } | undefined;
      if (!row) return;
      const errors = [...(row.errors ? (JSON.parse(row.errors) as Issue[]) : []), error];
      this.sql("UPDATE rows SET phase = 'invalid', errors = ? WHERE batch_id = ? AND line = ?").run(JSON.stringify(errors), batchId, line);
    });
  }

  async rejectBatch(batchId: string, reason: string): Promise<void> {
    this.atomic(() => {
      this.sql("UPDATE rows SET phase = 'not_sent' WHERE batch_id = ? AND phase = 'checking'").run(batchId);
      this.sql("UPDATE batches SET status = 'rejected', reason = ? WHERE id = ?").run(reason, batchId);
    });
  }

  async acceptBatch(batchId: string): Promise<{ ready: number; refused: number; invalid: number }> {
    return this.atomic(() => {
      const refused = this.sql(`UPDATE rows SET phase = 'refused', outcome = 'external_id_already_used'
        WHERE batch_id = ? AND phase = 'checking' AND external_id IN (
          SELECT external_id FROM rows WHERE batch_id <> ? AND phase NOT IN ('checking', 'invalid', 'refused', 'not_sent'))`).run(batchId, batchId).changes;
      const ready = this.sql("UPDATE rows SET phase = 'ready' WHERE batch_id = ? AND phase = 'checking'").run(batchId).changes;
      const invalid = (this.sql("SELECT COUNT(*) FROM rows WHERE batch_id = ? AND phase = 'invalid'").pluck().get(batchId)) as number;
      this.sql("UPDATE batches SET status = 'accepted', rows_valid = ? WHERE id = ?").run(ready, batchId);
      return { ready, refused, invalid };
    });
  }

  async batchesInProcessing(): Promise<BatchRecord[]> {
    return this.sql("SELECT * FROM batches WHERE status IN ('intake', 'accepted')").all() as BatchRecord[];
  }

  async interruptedIntakes(): Promise<BatchRecord[]> {
    return this.sql("SELECT * FROM batches WHERE status = 'intake' ORDER BY received_at, id").all() as BatchRecord[];
  }

  async batch(id: string): Promise<BatchRecord | undefined> {
    return this.sql('SELECT * FROM batches WHERE id = ?').get(id) as BatchRecord | undefined;
  }

  async *rows(batchId: string): AsyncIterable<RowRecord> {
    // Pages of rows, not one long-lived cursor: other operations may write in between.
    const page = this.sql('SELECT batch_id, line, external_id, phase, outcome, errors, request FROM rows WHERE batch_id = ? AND line > ? ORDER BY line LIMIT 1000');
    for (let after = 0; ; ) {
      const rows = page.all(batchId, after) as RowColumns[];
      if (rows.length === 0) return;
      for (const row of rows) {
        yield {
          ...row,
          errors: row.errors ? (JSON.parse(row.errors) as Issue[]) : [],
          request: row.request ? (JSON.parse(row.request) as PayoutRequest) : null,
        };
      }
      after = (rows[rows.length - 1] as RowColumns).line;
    }
  }

  // ---- the pipeline

  async openBatches(): Promise<BatchRecord[]> {
    return this.sql("SELECT * FROM batches WHERE status = 'accepted' ORDER BY received_at, id").all() as BatchRecord[];
  }

  async rowsInPhases(batchId: string, phases: readonly string[], afterLine: number, limit: number): Promise<PipelineRow[]> {
    const marks = phases.map(() => '?').join(', ');
    const rows = this.sql(`SELECT ${PIPELINE_COLUMNS} FROM rows WHERE batch_id = ? AND phase IN (${marks}) AND line > ? ORDER BY line LIMIT ?`)
      .all(batchId, ...phases, afterLine, limit) as PipelineColumns[];
    return rows.map(toPipelineRow);
  }

  async allRowsInPhases(phases: readonly string[]): Promise<PipelineRow[]> {
    const marks = phases.map(() => '?').join(', ');
    const rows = this.sql(`SELECT ${PIPELINE_COLUMNS} FROM rows WHERE phase IN (${marks}) AND batch_id IN (SELECT id FROM batches WHERE status = 'accepted') ORDER BY batch_id, line`)
      .all(...phases) as PipelineColumns[];
    return rows.map(toPipelineRow);
  }

  async movePhase(batchId: string, line: number, from: readonly string[], to: string, outcome?: string | null): Promise<boolean> {
    const marks = from.map(() => '?').join(', ');
    const set = outcome === undefined ? '' : ', outcome = ?';
    const args = outcome === undefined ? [to, batchId, line, ...from] : [to, outcome, batchId, line, ...from];
    return this.sql(`UPDATE rows SET phase = ?${set} WHERE batch_id = ? AND line = ? AND phase IN (${marks})`).run(...args).changes === 1;
  }

  async observe(batchId: string, line: number, o: Observation, phase?: string, at?: string): Promise<boolean> {
    return this.atomic(() => {
      const row = this.sql('SELECT state, observed_at FROM rows WHERE batch_id = ? AND line = ?').get(batchId, line) as { state: string | null; observed_at: string | null } | undefined;
      if (!row) return false;
      const newer = row.observed_at === null || o.updated_at === null || o.updated_at > row.observed_at
        || (o.updated_at === row.observed_at && (STATE_RANK[o.state] ?? 0) >= (STATE_RANK[row.state ?? ''] ?? 0));
      if (!newer) {
        // An older observation (a late webhook, a slow answer) never moves the state back; the
        // phase is paybatch's own step, recorded all the same.
        if (phase !== undefined) {
          this.sql('UPDATE rows SET phase = ?, transaction_id = COALESCE(transaction_id, ?), created_at = COALESCE(created_at, ?) WHERE batch_id = ? AND line = ?')
            .run(phase, o.transaction_id, at ?? o.updated_at, batchId, line);
        }
        return false;
      }
      this.sql(`UPDATE rows SET transaction_id = @transaction_id, state = @state, state_reason = @state_reason, state_reason_code = @state_reason_code,
          input_amount = COALESCE(@input_amount, input_amount), input_currency = COALESCE(@input_currency, input_currency),
          output_amount = COALESCE(@output_amount, output_amount), output_currency = COALESCE(@output_currency, output_currency),
          observed_at = COALESCE(@updated_at, observed_at), created_at = COALESCE(created_at, @at),
          settled_at = CASE WHEN @state IN ('paid', 'refunded', 'canceled') THEN COALESCE(settled_at, @at) ELSE settled_at END,
          paid_at = CASE WHEN @state = 'paid' THEN COALESCE(paid_at, @moved_at) ELSE paid_at END,
          refunded_at = CASE WHEN @state = 'refunded' THEN COALESCE(refunded_at, @moved_at) ELSE refunded_at END,
          refunded_amount = CASE WHEN @state = 'refunded' THEN COALESCE(@refunded_amount, refunded_amount, @input_amount, input_amount) ELSE refunded_amount END,
          phase = COALESCE(@phase, phase)
        WHERE batch_id = @batch_id AND line = @line`).run({
        ...o, at: at ?? o.updated_at, moved_at: o.updated_at ?? at ?? null, phase: phase ?? null, batch_id: batchId, line,
      });
      if (row.state !== o.state) this.sql(`UPDATE batches SET ${CHANGE_COUNTER[o.source]} = ${CHANGE_COUNTER[o.source]} + 1 WHERE id = ?`).run(batchId);
      return true;
    });
  }

  async reserveFunding(batchId: string, line: number, budget: bigint | null): Promise<Reservation> {
    return this.atomic((): Reservation => {
      const batch = this.sql('SELECT funding_stopped FROM batches WHERE id = ?').get(batchId) as { funding_stopped: number } | undefined;
      if (!batch || batch.funding_stopped) return 'stopped';
      const row = this.sql("SELECT input_amount, input_currency FROM rows WHERE batch_id = ? AND line = ? AND phase = 'created'").get(batchId, line) as { input_amount: string | null; input_currency: string | null } | undefined;
      // Another step (a webhook, a read) reserved it first, or it moved on: nothing to do here.
      if (!row || row.input_amount === null) return 'busy';
      if (budget !== null) {
        const committed = this.sql(`SELECT input_amount FROM rows WHERE batch_id = ? AND input_currency = ?
          AND (phase IN ('funding', 'funded') OR (phase = 'final' AND funded_at IS NOT NULL))`).pluck().all(batchId, row.input_currency) as string[];
        const spent = committed.reduce((sum, amount) => sum + BigInt(amount), 0n);
        if (spent + BigInt(row.input_amount) > budget) return 'over_budget';
      }
      this.sql("UPDATE rows SET phase = 'funding' WHERE batch_id = ? AND line = ?").run(batchId, line);
      return 'reserved';
    });
  }

  /** Marks a row funded (the service accepted the funding, or a state shows it) with the time; a final row keeps its phase. */
  async recordFunded(batchId: string, line: number, at: string): Promise<void> {
    this.sql(`UPDATE rows SET funded_at = COALESCE(funded_at, ?),
      phase = CASE WHEN phase IN ('funding', 'created') THEN 'funded' ELSE phase END WHERE batch_id = ? AND line = ?`).run(at, batchId, line);
  }

  async refuseRow(batchId: string, line: number, from: readonly string[], outcome: string, message: string): Promise<boolean> {
    const marks = from.map(() => '?').join(', ');
    const errors = JSON.stringify([{ line, column: 'external_id', code: outcome, message }]);
    return this.sql(`UPDATE rows SET phase = 'final', outcome = ?, errors = ? WHERE batch_id = ? AND line = ? AND phase IN (${marks})`)
      .run(outcome, errors, batchId, line, ...from).changes === 1;
  }

  async stopFunding(batchId: string): Promise<void> {
    this.sql('UPDATE batches SET funding_stopped = 1 WHERE id = ?').run(batchId);
  }

  async scheduleRead(batchId: string, line: number, nextReadAt: number, counted: boolean): Promise<void> {
    this.sql('UPDATE rows SET next_read_at = ?, reads = reads + ? WHERE batch_id = ? AND line = ?').run(nextReadAt, counted ? 1 : 0, batchId, line);
  }

  async dueReads(now: number, limit: number): Promise<PipelineRow[]> {
    const rows = this.sql(`SELECT ${PIPELINE_COLUMNS} FROM rows WHERE phase IN ('created', 'funded', 'cancelling') AND next_read_at IS NOT NULL AND next_read_at <= ?
      AND batch_id IN (SELECT id FROM batches WHERE status = 'accepted') ORDER BY next_read_at LIMIT ?`).all(now, limit) as PipelineColumns[];
    return rows.map(toPipelineRow);
  }

  async scheduleOrphans(now: number): Promise<number> {
    return this.sql(`UPDATE rows SET next_read_at = ? WHERE phase IN ('created', 'funded', 'cancelling') AND next_read_at IS NULL
      AND batch_id IN (SELECT id FROM batches WHERE status = 'accepted')`).run(now).changes;
  }

  async unsettledRows(batchId: string): Promise<number> {
    return this.sql(`SELECT COUNT(*) FROM rows WHERE batch_id = ? AND phase IN ${UNSETTLED_PHASES}`).pluck().get(batchId) as number;
  }

  async settleBatch(batchId: string, at: string): Promise<void> {
    this.sql("UPDATE batches SET status = 'settled', settled_at = ? WHERE id = ? AND status = 'accepted'").run(at, batchId);
  }

  async *resultRows(batchId: string): AsyncIterable<ResultRow> {
    const page = this.sql(`SELECT line, external_id, transaction_id, phase, outcome, state, state_reason, state_reason_code,
      input_amount, input_currency, output_amount, output_currency, errors FROM rows WHERE batch_id = ? AND line > ? ORDER BY line LIMIT 1000`);
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
    const row = this.sql(`SELECT ${PIPELINE_COLUMNS} FROM rows WHERE external_id = ? AND phase NOT IN ('checking', 'invalid', 'refused', 'not_sent')`)
      .get(externalId) as PipelineColumns | undefined;
    return row && toPipelineRow(row);
  }

  async progress(batchId: string): Promise<BatchProgress> {
    return this.sql(`SELECT
        COUNT(*) FILTER (WHERE r.phase NOT IN ('checking', 'invalid', 'refused')) AS sendable,
        COUNT(r.transaction_id) AS created,
        COUNT(r.funded_at) AS funded,
        COUNT(*) FILTER (WHERE r.phase IN ('final', 'not_sent')) AS settled,
        COUNT(*) FILTER (WHERE r.phase IN ${UNSETTLED_PHASES}) AS unsettled,
        MIN(CASE WHEN r.phase IN ${UNSETTLED_PHASES} THEN COALESCE(r.created_at, b.received_at) END) AS oldest_unsettled_at
      FROM rows r JOIN batches b ON b.id = r.batch_id WHERE r.batch_id = ?`).get(batchId) as BatchProgress;
  }

  async recentBatches(since: string): Promise<BatchRecord[]> {
    return this.sql("SELECT * FROM batches WHERE status IN ('intake', 'accepted') OR received_at >= ? ORDER BY received_at DESC, id DESC").all(since) as BatchRecord[];
  }

  async rowsWaitingOnSender(senderExternalId: string): Promise<PipelineRow[]> {
    const rows = this.sql(`SELECT ${PIPELINE_COLUMNS} FROM rows WHERE batch_id IN (SELECT id FROM batches WHERE status = 'accepted')
      AND phase = 'created' AND state IN ('initial', 'verified') AND json_extract(request, '$.sender.external_id') = ? ORDER BY batch_id, line`)
      .all(senderExternalId) as PipelineColumns[];
    return rows.map(toPipelineRow);
  }

  // ---- reconciliation

  async ledgerRows(scope: ReportScope): Promise<LedgerRow[]> {
    // A row never created (not sent for lack of balance) counts from when its batch was received.
    const columns = `r.batch_id, r.line, r.external_id, r.transaction_id, r.phase, r.outcome, r.state, r.state_reason, r.state_reason_code,
      r.input_amount, r.input_currency, r.output_amount, r.output_currency, r.refunded_amount,
      COALESCE(r.created_at, b.received_at) AS created_at, r.funded_at, r.paid_at, r.refunded_at, r.observed_at`;
    if ('batch' in scope) {
      return this.sql(`SELECT ${columns} FROM rows r JOIN batches b ON b.id = r.batch_id WHERE r.batch_id = ? ORDER BY r.batch_id, r.line`).all(scope.batch) as LedgerRow[];
    }
    return this.sql(`SELECT ${columns} FROM rows r JOIN batches b ON b.id = r.batch_id
      WHERE (r.funded_at < @to AND (r.paid_at IS NULL OR r.paid_at >= @from) AND (r.refunded_at IS NULL OR r.refunded_at >= @from))
         OR (r.outcome IN ('quote_rejected', 'insufficient_funds') AND COALESCE(r.created_at, b.received_at) >= @from AND COALESCE(r.created_at, b.received_at) < @to)
      ORDER BY r.batch_id, r.line`).all(scope) as LedgerRow[];
  }

  async knowsTransaction(transactionId: string): Promise<boolean> {
    return this.sql('SELECT 1 FROM rows WHERE transaction_id = ? LIMIT 1').get(transactionId) !== undefined;
  }

  // ---- webhooks and schedules

  async recordWebhookEvent(event: Omit<WebhookEvent, 'id'>): Promise<number | 'replayed'> {
    const inserted = this.sql(`INSERT INTO webhook_events (received_at, nonce, webhook_id, event_type, object_id, body)
      VALUES (@received_at, @nonce, @webhook_id, @event_type, @object_id, @body) ON CONFLICT (nonce) DO NOTHING`).run(event);
    return inserted.changes === 1 ? Number(inserted.lastInsertRowid) : 'replayed';
  }

  async unappliedWebhookEvents(limit: number): Promise<WebhookEvent[]> {
    return this.sql(`SELECT e.* FROM webhook_events e LEFT JOIN webhook_event_outcomes o ON o.event_id = e.id
      WHERE o.event_id IS NULL ORDER BY e.id LIMIT ?`).all(limit) as WebhookEvent[];
  }

  async recordWebhookOutcome(eventId: number, outcome: string, at: string): Promise<void> {
    this.sql('INSERT INTO webhook_event_outcomes (event_id, outcome, applied_at) VALUES (?, ?, ?) ON CONFLICT (event_id) DO NOTHING').run(eventId, outcome, at);
  }

  async webhookEventCounts(): Promise<WebhookEventCounts> {
    const received = this.sql('SELECT COUNT(*) FROM webhook_events').pluck().get() as number;
    const outcomes = this.sql('SELECT outcome, COUNT(*) AS n FROM webhook_event_outcomes GROUP BY outcome ORDER BY outcome').all() as { outcome: string; n: number }[];
    const applied = outcomes.reduce((sum, o) => sum + o.n, 0);
    return { received, pending: received - applied, outcomes: Object.fromEntries(outcomes.map((o) => [o.outcome, o.n])) };
  }

  async lastScheduleRun(name: string): Promise<number | null> {
    return (this.sql('SELECT last_run_at FROM schedule_runs WHERE name = ?').pluck().get(name) as number | undefined) ?? null;
  }

  async recordScheduleRun(name: string, at: number): Promise<void> {
    this.sql('INSERT INTO schedule_runs (name, last_run_at) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET last_run_at = excluded.last_run_at').run(name, at);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
