/**
 * The SQLite implementation of the store: better-sqlite3, synchronous, so each
 * method is atomic. The pipeline's queries are in sqlite-pipeline.ts; intake,
 * reports, webhook events and schedules here.
 */
import type { RowColumns } from './row-record.js';
import { storedOf, toRowRecord } from './row-record.js';
import type { PayoutRequest } from '../api/payout-request.js';
import type { Issue } from '../validate/issue.js';
import { NEVER_SENT_PHASES } from '../payout-states.js';
import { REFUSAL_OUTCOMES } from '../reports/reconciliation.js';
import type { SqliteDatabase } from './database.js';
import { damagedMessage, isDamage, migrate, openDatabase } from './database.js';
import { DatabaseUnusable } from '../errors.js';
import type { AuditEntry, NewAuditEntry } from '../audit/chain.js';
import { GENESIS } from '../audit/chain.js';
import { MIGRATIONS } from './migrations.js';
import { ROW_RECORD_COLUMNS, phaseList } from './sql-lists.js';
import { SqliteOutbox } from './sqlite-outbox.js';
import {
  allowDuplicateSqlite, batchTwinsSqlite, endHeldDuplicatesSqlite, heldDuplicatesSqlite, possibleDuplicatesSqlite, recordPossibleDuplicatesSqlite, recordRecipientsSqlite, twinsOfSqlite,
} from './duplicate-queries-sqlite.js';
import { SQLITE_CORRIDORS } from './corridor-sql.js';
import { CorridorCounts } from './corridor-counts.js';
import type {
  Allowance, DuplicateStore, PossibleDuplicate, RecipientEntry, Twin, TwinQuery,
  ApprovalRecord, ApprovalStore, AuditStore, BatchRecord, IntakeStore, NewBatch, LeaseHolder, LeaseStore, NewRow, ReleaseSeal, RowRecord, CorrectionLink, ReportScope, ReportStore, ScheduleStore, WebhookEvent, WebhookEventCounts, WebhookStore,
} from './store.js';
import type { LedgerRow } from '../reports/reconciliation.js';

const REFUSALS = phaseList([...REFUSAL_OUTCOMES]);
/** Lines made sendable per transaction when a batch is accepted. */
const ACCEPT_CHUNK_LINES = 5000;

export class SqliteStore extends SqliteOutbox implements IntakeStore, DuplicateStore, WebhookStore, ScheduleStore, ReportStore, LeaseStore, ApprovalStore, AuditStore {
  private constructor(db: SqliteDatabase) {
    super(db);
  }

  /** Opens (and migrates) the database. `run` and `watch` have it checked whole beside their work (background-check.ts). */
  static open(file: string): SqliteStore {
    let db: SqliteDatabase | undefined;
    try {
      db = openDatabase(file);
      migrate(db, MIGRATIONS);
    } catch (error) {
      db?.close();
      if (isDamage(error)) throw new DatabaseUnusable(damagedMessage(file, [(error as Error).message]));
      throw error;
    }
    return new SqliteStore(db);
  }

  /** An online copy (SQLite's backup API), consistent even while another process writes. */
  async backup(to: string): Promise<void> {
    await this.db.backup(to);
  }

  async acceptedBatchWithContent(sha256: string): Promise<BatchRecord | undefined> {
    return this.sql("SELECT * FROM batches WHERE sha256 = ? AND status IN ('accepted', 'settled') ORDER BY received_at LIMIT 1").get(sha256) as BatchRecord | undefined;
  }

  async beginBatch({ taken_by: _one_worker, ...batch }: NewBatch): Promise<string> {
    return this.atomic(() => {
      const stem = `B${batch.received_at.slice(0, 10).replace(/-/g, '')}-${batch.sha256.slice(0, 8)}`;
      let id = stem;
      for (let n = 2; this.sql('SELECT 1 FROM batches WHERE id = ?').get(id); n++) id = `${stem}-${n}`;
      this.sql(`INSERT INTO batches (id, file_name, sha256, size_bytes, status, policy, received_at, file_mtime_ms, send_after, released)
        VALUES (@id, @file_name, @sha256, @size_bytes, 'intake', @policy, @received_at, @file_mtime_ms, @send_after, 0)`).run({ id, ...batch });
      return id;
    });
  }

  async addRows(batchId: string, rows: readonly NewRow[]): Promise<void> {
    const insert = this.sql(`INSERT INTO rows (batch_id, line, external_id, request, phase, errors, input_currency, output_amount, output_currency,
      recipient_name, original_batch, original_line, invalid_fields) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    // Sendable as stored, unless its external_id is already taken (by another batch, or by an earlier line of this
    // one): that row waits in 'checking' for the acceptance, which refuses it or makes it ready (see acceptBatch).
    const taken = this.sql(`SELECT 1 FROM rows WHERE external_id = ? AND phase NOT IN ${phaseList(NEVER_SENT_PHASES)}`).pluck();
    this.atomic(() => {
      // A batch no longer in intake (rejected as interrupted by whoever took the workspace over) gets its last rows
      // as its rejection left the others: not sent.
      const open = this.inIntake(batchId);
      const corridors = new CorridorCounts();
      for (const row of rows) {
        const stored = storedOf(row);
        const phase = !stored ? 'invalid' : !open ? 'not_sent' : taken.get(row.external_id) === undefined ? 'ready' : 'checking';
        if (phase === 'ready' && stored) corridors.add(stored);
        insert.run(
          batchId,
          row.line,
          row.external_id,
          stored?.json ?? null,
          phase,
          row.errors.length > 0 ? JSON.stringify(row.errors) : null,
          stored?.inputCurrency ?? null,
          stored?.outputAmount ?? null,
          stored?.outputCurrency ?? null,
          stored?.recipientName ?? null,
          row.original?.batch ?? null,
          row.original?.line ?? null,
          !stored && row.fields ? JSON.stringify(row.fields) : null,
        );
      }
      const count = this.sql(SQLITE_CORRIDORS.count);
      for (const c of corridors.values()) count.run(batchId, c.country, c.type, c.inputCurrency, c.outputCurrency, c.rows);
      this.sql('UPDATE batches SET rows_total = rows_total + ? WHERE id = ?').run(rows.length, batchId);
    });
  }

  async invalidateRow(batchId: string, line: number, error: Issue): Promise<void> {
    this.atomic(() => {
      const row = this.sql('SELECT errors, phase FROM rows WHERE batch_id = ? AND line = ?').get(batchId, line) as { errors: string | null; phase: string } | undefined;
      if (!row) return;
      if (row.phase === 'ready') this.sql(SQLITE_CORRIDORS.uncount).run(batchId, line);
      const errors = [...(row.errors ? (JSON.parse(row.errors) as Issue[]) : []), error];
      this.sql("UPDATE rows SET phase = 'invalid', errors = ? WHERE batch_id = ? AND line = ?").run(JSON.stringify(errors), batchId, line);
    });
  }

  async suspendIntake(batchId: string): Promise<void> {
    this.atomic(() => {
      if (this.inIntake(batchId)) this.sql("UPDATE rows SET phase = 'checking' WHERE batch_id = ? AND phase = 'ready'").run(batchId);
    });
  }

  private inIntake(batchId: string): boolean {
    return this.sql('SELECT status FROM batches WHERE id = ?').pluck().get(batchId) === 'intake';
  }

  async rejectBatch(batchId: string, reason: string): Promise<boolean> {
    return this.atomic(() => {
      if (this.sql("UPDATE batches SET status = 'rejected', reason = ? WHERE id = ? AND status = 'intake'").run(reason, batchId).changes === 0) return false;
      // Rows made ready by an acceptance cut short (see acceptBatch) end with the rest: nothing of the batch was sent.
      this.sql("UPDATE rows SET phase = 'not_sent' WHERE batch_id = ? AND phase IN ('checking', 'ready')").run(batchId);
      return true;
    });
  }

  async withdrawBatch(batchId: string, outcome: string, reason: string): Promise<boolean> {
    return this.atomic(() => {
      const sent = this.sql(`SELECT 1 FROM rows WHERE batch_id = ? AND phase NOT IN ('ready', ${NEVER_SENT_PHASES.map((p) => `'${p}'`).join(', ')}) LIMIT 1`).get(batchId);
      if (sent) return false;
      this.sql("UPDATE rows SET phase = 'not_sent', outcome = ?, outcome_detail = ?, revision = revision + 1 WHERE batch_id = ? AND phase = 'ready'").run(outcome, reason, batchId);
      this.sql("UPDATE batches SET status = 'rejected', reason = ? WHERE id = ?").run(reason, batchId);
      return true;
    });
  }

  async releaseBatch(batchId: string, seal?: ReleaseSeal): Promise<void> {
    this.sql('UPDATE batches SET released = 1, released_at = ?, release_seal = ? WHERE id = ?').run(seal?.at ?? null, seal?.seal ?? null, batchId);
  }

  /**
   * A batch's rows are stored sendable ('ready') as they are taken in (see
   * addRows), their corridors counted in the batch's summary then: once each,
   * neither written nor read again here. The batch stays in intake, so
   * nothing of it is sent, until the last transaction here accepts it; a
   * rejection (a bad file, an interrupted intake) ends its ready rows as not
   * sent, and a late finding (a duplicate external_id) makes a row invalid.
   * Here, in chunks of lines, each its own transaction (one over a million rows
   * would put every page of the batch in the write-ahead log at once): the rows
   * left in 'checking' (an external_id taken when stored) are refused when
   * another batch has sent or will send it, else made ready, their corridors
   * added to the batch's summary.
   */
  async acceptBatch(batchId: string): Promise<{ ready: number; refused: number; invalid: number } | null> {
    const lastLine = (this.sql('SELECT MAX(line) FROM rows WHERE batch_id = ?').pluck().get(batchId) as number | null) ?? 0;
    for (let after = 0; after < lastLine; after += ACCEPT_CHUNK_LINES) {
      const accepted = this.atomic(() => {
        if (!this.inIntake(batchId)) return false;
        // By the index of phases: only the few rows still checking, not every row of the chunk.
        this.sql(`UPDATE rows INDEXED BY rows_batch_phase SET phase = 'refused', outcome = 'external_id_already_used'
          WHERE batch_id = ? AND line > ? AND line <= ? AND phase = 'checking' AND EXISTS (
            SELECT 1 FROM rows o WHERE o.external_id = rows.external_id AND o.batch_id <> rows.batch_id AND o.phase NOT IN ${phaseList(NEVER_SENT_PHASES)})`)
          .run(batchId, after, after + ACCEPT_CHUNK_LINES);
        // The corridors of the rows made ready, with them (those stored ready were counted as stored): the check
        // before sending reads these, not the rows.
        this.sql(SQLITE_CORRIDORS.summariseChecking).run(batchId, after, after + ACCEPT_CHUNK_LINES);
        this.sql("UPDATE rows INDEXED BY rows_batch_phase SET phase = 'ready' WHERE batch_id = ? AND line > ? AND line <= ? AND phase = 'checking'").run(batchId, after, after + ACCEPT_CHUNK_LINES);
        return true;
      });
      if (!accepted) return null;
      // Between chunks, the rest of the process (a receiver, a console) has its turn.
      await new Promise((resolve) => setImmediate(resolve));
    }
    return this.atomic(() => {
      if (!this.inIntake(batchId)) return null;
      const count = (phase: string): number => this.sql('SELECT COUNT(*) FROM rows WHERE batch_id = ? AND phase = ?').pluck().get(batchId, phase) as number;
      const counts = { ready: count('ready'), refused: count('refused'), invalid: count('invalid') };
      this.sql("UPDATE batches SET status = 'accepted', rows_valid = ? WHERE id = ?").run(counts.ready, batchId);
      return counts;
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

  async correctionLinks(batchId: string): Promise<CorrectionLink[]> {
    return this.sql('SELECT line, external_id, original_batch, original_line FROM rows WHERE batch_id = ? AND original_batch IS NOT NULL ORDER BY line').all(batchId) as CorrectionLink[];
  }

  async setCorrectsBatch(batchId: string, original: string): Promise<void> {
    this.sql('UPDATE batches SET corrects_batch = ? WHERE id = ?').run(original, batchId);
  }

  async correctionsOf(batchId: string, line: number): Promise<RowRecord[]> {
    return (this.sql(`SELECT ${ROW_RECORD_COLUMNS} FROM rows WHERE original_batch = ? AND original_line = ? ORDER BY batch_id, line`).all(batchId, line) as RowColumns[]).map(toRowRecord);
  }

  async *rows(batchId: string): AsyncIterable<RowRecord> {
    // Pages of rows, not one long-lived cursor: other operations may write in between.
    const page = this.sql(`SELECT ${ROW_RECORD_COLUMNS} FROM rows WHERE batch_id = ? AND line > ? ORDER BY line LIMIT 1000`);
    for (let after = 0; ; ) {
      const rows = page.all(batchId, after) as RowColumns[];
      if (rows.length === 0) return;
      for (const row of rows) {
        yield toRowRecord(row);
      }
      after = (rows[rows.length - 1] as RowColumns).line;
    }
  }

  // ---- reconciliation

  async ledgerRows(scope: ReportScope): Promise<LedgerRow[]> {
    // A row never created (not sent for lack of balance) counts from when its batch was received.
    const columns = `r.batch_id, r.line, r.external_id, r.transaction_id, r.phase, r.outcome, r.outcome_detail, r.state, r.state_reason, r.state_reason_code,
      r.input_amount, r.input_currency, r.output_amount, r.output_currency, r.refunded_amount, r.errors,
      COALESCE(r.created_at, b.received_at) AS created_at, r.funded_at, r.paid_at, r.refunded_at, r.observed_at,
      r.recipient_name, r.settled_at, r.original_batch, r.original_line`;
    if ('batch' in scope) {
      return this.sql(`SELECT ${columns} FROM rows r JOIN batches b ON b.id = r.batch_id WHERE r.batch_id = ? ORDER BY r.batch_id, r.line`).all(scope.batch) as LedgerRow[];
    }
    return this.sql(`SELECT ${columns} FROM rows r JOIN batches b ON b.id = r.batch_id
      WHERE (r.funded_at < @to AND (r.paid_at IS NULL OR r.paid_at >= @from) AND (r.refunded_at IS NULL OR r.refunded_at >= @from))
         OR ((r.outcome IN ${REFUSALS} OR r.phase = 'held') AND COALESCE(r.created_at, b.received_at) >= @from AND COALESCE(r.created_at, b.received_at) < @to)
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

  async claimScheduleRun(name: string, expected: number | null, at: number): Promise<boolean> {
    if (expected === null) return this.sql('INSERT INTO schedule_runs (name, last_run_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING').run(name, at).changes === 1;
    return this.sql('UPDATE schedule_runs SET last_run_at = ? WHERE name = ? AND last_run_at = ?').run(at, name, expected).changes === 1;
  }

  // ---- the workspace lease

  async acquireLease(me: LeaseHolder, isAlive: (holder: LeaseHolder) => boolean, staleAfterMs: number): Promise<LeaseHolder | null> {
    return this.atomic(() => {
      const held = this.sql('SELECT token, holder, pid, host, acquired_at, renewed_at FROM workspace_lease WHERE id = 1').get() as LeaseHolder | undefined;
      if (held && held.token !== me.token && me.renewed_at - held.renewed_at < staleAfterMs && isAlive(held)) return held;
      this.sql(`INSERT INTO workspace_lease (id, token, holder, pid, host, acquired_at, renewed_at) VALUES (1, @token, @holder, @pid, @host, @acquired_at, @renewed_at)
        ON CONFLICT (id) DO UPDATE SET token = excluded.token, holder = excluded.holder, pid = excluded.pid, host = excluded.host,
          acquired_at = excluded.acquired_at, renewed_at = excluded.renewed_at`).run(me);
      return null;
    });
  }

  async renewLease(token: string, at: number): Promise<boolean> {
    return this.sql('UPDATE workspace_lease SET renewed_at = ? WHERE id = 1 AND token = ?').run(at, token).changes === 1;
  }

  async releaseLease(token: string): Promise<void> {
    this.sql('DELETE FROM workspace_lease WHERE id = 1 AND token = ?').run(token);
  }

  // ---- approvals

  async requestApproval(batchId: string, submittedBy: string, expiresAt: string): Promise<void> {
    this.sql("UPDATE batches SET submitted_by = ?, approval = 'awaiting', approval_expires_at = ? WHERE id = ?").run(submittedBy, expiresAt, batchId);
  }

  async recordApproval(record: Omit<ApprovalRecord, 'id'>): Promise<void> {
    this.sql(`INSERT INTO approvals (batch_id, person, decision, statement, signature, reason, at)
      VALUES (@batch_id, @person, @decision, @statement, @signature, @reason, @at)`).run(record);
  }

  async deploymentId(): Promise<string> {
    return this.sql('SELECT id FROM deployment WHERE one = 1').pluck().get() as string;
  }

  async approvalsOf(batchId: string): Promise<ApprovalRecord[]> {
    return this.sql('SELECT * FROM approvals WHERE batch_id = ? ORDER BY id').all(batchId) as ApprovalRecord[];
  }

  async decisionEntries(batchId: string): Promise<AuditEntry[]> {
    return this.sql("SELECT * FROM audit_log WHERE subject = ? AND action IN ('approved', 'rejected') ORDER BY seq").all(batchId) as AuditEntry[];
  }

  async setApprovalState(batchId: string, state: string, reason: string | null): Promise<void> {
    this.sql('UPDATE batches SET approval = ?, approval_reason = ? WHERE id = ?').run(state, reason, batchId);
  }

  async *acceptedRows(batchId: string): AsyncIterable<{ line: number; request: PayoutRequest }> {
    const page = this.sql(`SELECT line, request FROM rows WHERE batch_id = ? AND line > ? AND request IS NOT NULL
      AND phase NOT IN ('checking', 'invalid', 'refused') ORDER BY line LIMIT 1000`);
    for (let after = 0; ; ) {
      const rows = page.all(batchId, after) as { line: number; request: string }[];
      if (rows.length === 0) return;
      for (const row of rows) yield { line: row.line, request: JSON.parse(row.request) as PayoutRequest };
      after = (rows[rows.length - 1] as { line: number }).line;
    }
  }

  // ---- the audit trail

  async appendAudit(entry: NewAuditEntry): Promise<void> {
    this.atomic(() => this.appendAuditNow(entry));
  }

  async auditEntries(afterSeq: number, limit: number): Promise<AuditEntry[]> {
    return this.sql('SELECT * FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?').all(afterSeq, limit) as AuditEntry[];
  }

  async auditHead(except = ''): Promise<{ seq: number; hash: string }> {
    return (this.sql('SELECT seq, hash FROM audit_log WHERE action <> ? ORDER BY seq DESC LIMIT 1').get(except) as { seq: number; hash: string } | undefined) ?? { seq: 0, hash: GENESIS };
  }

  async lastAudit(action: string): Promise<AuditEntry | undefined> {
    return this.sql('SELECT * FROM audit_log WHERE action = ? ORDER BY seq DESC LIMIT 1').get(action) as AuditEntry | undefined;
  }

  // ---- possible duplicates (the queries are in duplicate-queries-sqlite.ts)

  async recordRecipients(batchId: string, entries: readonly RecipientEntry[]): Promise<void> {
    this.atomic(() => recordRecipientsSqlite(this.db, batchId, entries));
  }

  async twinsOf(query: TwinQuery, since: string, limit: number): Promise<Twin[]> {
    return twinsOfSqlite(this.db, query, since, limit);
  }

  async batchTwins(batchId: string, after: number, upto: number, since: string): Promise<(Twin & { of_line: number })[]> {
    return batchTwinsSqlite(this.db, batchId, after, upto, since);
  }

  async recordPossibleDuplicates(found: Parameters<DuplicateStore['recordPossibleDuplicates']>[0]): Promise<void> {
    this.atomic(() => recordPossibleDuplicatesSqlite(this.db, found));
  }

  async possibleDuplicates(batchId: string): Promise<PossibleDuplicate[]> {
    return possibleDuplicatesSqlite(this.db, batchId);
  }

  async heldDuplicates(limit: number): Promise<PossibleDuplicate[]> {
    return heldDuplicatesSqlite(this.db, limit);
  }

  async endHeldDuplicates(batchId: string, outcome: string | null, detail: string | null): Promise<number> {
    return endHeldDuplicatesSqlite(this.db, batchId, outcome, detail);
  }

  async allowDuplicate(batchId: string, line: number, allowance: Allowance): Promise<boolean> {
    return this.atomic(() => allowDuplicateSqlite(this.db, batchId, line, allowance, (entry) => this.appendAuditNow(entry)));
  }
}
