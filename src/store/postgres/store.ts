/**
 * The PostgreSQL store: every port of store.ts, to the same contract as
 * SQLite's (test/store/contract.ts), for several workers sharing one database.
 * The pipeline's queries are in pipeline.ts; intake, reports, webhook events,
 * schedules, the lease, approvals and the audit trail here.
 */
import type { RowColumns } from '../row-record.js';
import { storedOf, toRowRecord } from '../row-record.js';
import pg from 'pg';
import type { PayoutRequest } from '../../api/payout-request.js';
import type { Issue } from '../../validate/issue.js';
import { NEVER_SENT_PHASES } from '../../payout-states.js';
import { REFUSAL_OUTCOMES } from '../../reports/reconciliation.js';
import type { LedgerRow } from '../../reports/reconciliation.js';
import type { AuditEntry, NewAuditEntry } from '../../audit/chain.js';
import { GENESIS } from '../../audit/chain.js';
import { DatabaseUnreachable, DatabaseUnusable } from '../../errors.js';
import { connectionLost, lostDetail } from './connection.js';
import { ROW_RECORD_COLUMNS, phaseList } from '../sql-lists.js';
import { migratePg } from './base.js';
import { PG_MIGRATIONS } from './migrations.js';
import { PgOutbox } from './outbox.js';
import { allowDuplicatePg, batchTwinsPg, endHeldDuplicatesPg, heldDuplicatesPg, possibleDuplicatesPg, recordPossibleDuplicatesPg, recordRecipientsPg, twinsOfPg } from './duplicate-queries.js';
import { PG_CORRIDORS } from '../corridor-sql.js';
import type {
  Allowance, DuplicateStore, PossibleDuplicate, RecipientEntry, Twin, TwinQuery,
  ApprovalRecord, ApprovalStore, AuditStore, BatchRecord, IntakeStore, NewBatch, LeaseHolder, LeaseStore, NewRow, ReportScope, ReportStore, RowRecord, CorrectionLink,
  ReleaseSeal, ScheduleStore, WebhookEvent, WebhookEventCounts, WebhookStore,
} from '../store.js';
import { redactUrl } from '../database-url.js';

const REFUSALS = phaseList([...REFUSAL_OUTCOMES]);
const NEVER_SENT = phaseList(NEVER_SENT_PHASES);
const LEASE_LOCK = 7_281_921;
const ACCEPT_LOCK = 7_281_922;


export class PostgresStore extends PgOutbox implements IntakeStore, DuplicateStore, WebhookStore, ScheduleStore, ReportStore, LeaseStore, ApprovalStore, AuditStore {
  private constructor(pool: pg.Pool) {
    super(pool);
  }

  /** Connects (a pool of `max` connections) and applies the migrations not applied yet. */
  static async open(url: string, options: { max?: number } = {}): Promise<PostgresStore> {
    // Bounded waits: a statement, a lock or a transaction left open by a stalled worker never holds the others for long.
    const pool = new pg.Pool({
      connectionString: url, max: options.max ?? 10, connectionTimeoutMillis: 10_000,
      statement_timeout: 120_000, lock_timeout: 30_000, idle_in_transaction_session_timeout: 60_000,
    });
    // An idle connection that fails (the server restarted) must not bring the process down: the next query reconnects.
    // One taken from the pool is listened to while it is out (connection.ts).
    pool.on('error', () => {});
    try {
      await migratePg(pool, PG_MIGRATIONS);
    } catch (error) {
      await pool.end().catch(() => {});
      if (error instanceof DatabaseUnusable) throw error;
      // Down or out of reach is not a database this paybatch cannot use: run again once it answers (exit 75).
      if (connectionLost(error)) {
        throw new DatabaseUnreachable(`PostgreSQL at ${redactUrl(url)} cannot be reached (${lostDetail(error)}): nothing was changed; run again once it answers`, { cause: error });
      }
      throw new DatabaseUnusable(`PostgreSQL at ${redactUrl(url)} cannot be used: ${(error as Error).message}`);
    }
    return new PostgresStore(pool);
  }

  async acceptedBatchWithContent(sha256: string): Promise<BatchRecord | undefined> {
    return this.first<BatchRecord>("SELECT * FROM batches WHERE sha256 = $1 AND status IN ('accepted', 'settled') ORDER BY received_at LIMIT 1", [sha256]);
  }

  async beginBatch(batch: NewBatch): Promise<string> {
    const stem = `B${batch.received_at.slice(0, 10).replace(/-/g, '')}-${batch.sha256.slice(0, 8)}`;
    // The first free id, by insertion: two workers beginning the same content at once get two ids.
    for (let n = 1; ; n++) {
      const id = n === 1 ? stem : `${stem}-${n}`;
      const inserted = await this.run(`INSERT INTO batches (id, file_name, sha256, size_bytes, status, policy, received_at, file_mtime_ms, send_after, released, taken_by)
        VALUES ($1, $2, $3, $4, 'intake', $5, $6, $7, $8, 0, $9) ON CONFLICT (id) DO NOTHING`,
      [id, batch.file_name, batch.sha256, batch.size_bytes, batch.policy, batch.received_at, batch.file_mtime_ms, batch.send_after, batch.taken_by ?? null]);
      if (inserted === 1) return id;
    }
  }

  async addRows(batchId: string, rows: readonly NewRow[]): Promise<void> {
    if (rows.length === 0) return;
    // One statement per page of rows (arrays unnested), not one round trip per row.
    const stored = rows.map(storedOf);
    const column = <T>(pick: (row: NewRow, index: number) => T): T[] => rows.map(pick);
    await this.tx(async (c) => {
      await c.query(`INSERT INTO rows (batch_id, line, external_id, request, phase, errors, input_currency, output_amount, output_currency, recipient_name, original_batch, original_line, invalid_fields)
        SELECT $1, * FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::int[], $13::text[])`, [
        batchId,
        column((r) => r.line),
        column((r) => r.external_id),
        column((_r, i) => stored[i]?.json ?? null),
        column((_r, i) => (stored[i] ? 'checking' : 'invalid')),
        column((r) => (r.errors.length > 0 ? JSON.stringify(r.errors) : null)),
        column((_r, i) => stored[i]?.inputCurrency ?? null),
        column((_r, i) => stored[i]?.outputAmount ?? null),
        column((_r, i) => stored[i]?.outputCurrency ?? null),
        column((_r, i) => stored[i]?.recipientName ?? null),
        column((r) => r.original?.batch ?? null),
        column((r) => r.original?.line ?? null),
        column((r, i) => (!stored[i] && r.fields ? JSON.stringify(r.fields) : null)),
      ]);
      await c.query('UPDATE batches SET rows_total = rows_total + $1 WHERE id = $2', [rows.length, batchId]);
    });
  }

  async invalidateRow(batchId: string, line: number, error: Issue): Promise<void> {
    await this.tx(async (c) => {
      const row = await this.first<{ errors: string | null }>('SELECT errors FROM rows WHERE batch_id = $1 AND line = $2 FOR UPDATE', [batchId, line], c);
      if (!row) return;
      const errors = [...(row.errors ? (JSON.parse(row.errors) as Issue[]) : []), error];
      await c.query("UPDATE rows SET phase = 'invalid', errors = $1 WHERE batch_id = $2 AND line = $3", [JSON.stringify(errors), batchId, line]);
    });
  }

  async suspendIntake(_batchId: string): Promise<void> {
    // Rows are made ready only by the acceptance here, in the transaction that ends the intake: none to give back.
  }

  async rejectBatch(batchId: string, reason: string): Promise<boolean> {
    return this.tx(async (c) => {
      if ((await this.run("UPDATE batches SET status = 'rejected', reason = $1 WHERE id = $2 AND status = 'intake'", [reason, batchId], c)) === 0) return false;
      await c.query("UPDATE rows SET phase = 'not_sent' WHERE batch_id = $1 AND phase IN ('checking', 'ready')", [batchId]);
      return true;
    });
  }

  async withdrawBatch(batchId: string, outcome: string, reason: string): Promise<boolean> {
    return this.tx(async (c) => {
      // The batch locked first: a reservation (which locks it too) cannot slip in between the check and the withdrawal.
      await c.query('SELECT 1 FROM batches WHERE id = $1 FOR UPDATE', [batchId]);
      const sent = await this.first(`SELECT 1 FROM rows WHERE batch_id = $1 AND phase NOT IN ('ready', ${NEVER_SENT_PHASES.map((p) => `'${p}'`).join(', ')}) LIMIT 1`, [batchId], c);
      if (sent) return false;
      await c.query("UPDATE rows SET phase = 'not_sent', outcome = $1, outcome_detail = $2, revision = revision + 1 WHERE batch_id = $3 AND phase = 'ready'", [outcome, reason, batchId]);
      await c.query("UPDATE batches SET status = 'rejected', reason = $1 WHERE id = $2", [reason, batchId]);
      return true;
    });
  }

  async releaseBatch(batchId: string, seal?: ReleaseSeal): Promise<void> {
    await this.run('UPDATE batches SET released = 1, released_at = $2, release_seal = $3 WHERE id = $1', [batchId, seal?.at ?? null, seal?.seal ?? null]);
  }

  async acceptBatch(batchId: string): Promise<{ ready: number; refused: number; invalid: number } | null> {
    return this.tx(async (c) => {
      // One acceptance at a time: two batches with the same external_id accepted at once by two workers would both pass the check.
      await c.query('SELECT pg_advisory_xact_lock($1)', [ACCEPT_LOCK]);
      // Only a batch still in intake: one recovered as interrupted meanwhile (by another worker) is not accepted.
      if ((await this.first<{ status: string }>('SELECT status FROM batches WHERE id = $1 FOR UPDATE', [batchId], c))?.status !== 'intake') return null;
      const refused = await this.run(`UPDATE rows SET phase = 'refused', outcome = 'external_id_already_used'
        WHERE batch_id = $1 AND phase = 'checking' AND external_id IN (
          SELECT external_id FROM rows WHERE batch_id <> $1 AND phase NOT IN ${NEVER_SENT} AND external_id IS NOT NULL)`, [batchId], c);
      const ready = await this.run("UPDATE rows SET phase = 'ready' WHERE batch_id = $1 AND phase = 'checking'", [batchId], c);
      // The corridors of the rows made ready, with them: the check before sending reads these, not the rows.
      await c.query(PG_CORRIDORS.summariseAccepted, [batchId]);
      const invalid = (await this.first<{ n: number }>("SELECT COUNT(*)::int AS n FROM rows WHERE batch_id = $1 AND phase = 'invalid'", [batchId], c))?.n ?? 0;
      await c.query("UPDATE batches SET status = 'accepted', rows_valid = $1 WHERE id = $2", [ready, batchId]);
      return { ready, refused, invalid };
    });
  }

  async batchesInProcessing(): Promise<BatchRecord[]> {
    return this.all<BatchRecord>("SELECT * FROM batches WHERE status IN ('intake', 'accepted')");
  }

  async interruptedIntakes(): Promise<BatchRecord[]> {
    return this.all<BatchRecord>("SELECT * FROM batches WHERE status = 'intake' ORDER BY received_at, id");
  }

  async batch(id: string): Promise<BatchRecord | undefined> {
    return this.first<BatchRecord>('SELECT * FROM batches WHERE id = $1', [id]);
  }

  async correctionLinks(batchId: string): Promise<CorrectionLink[]> {
    return this.all<CorrectionLink>('SELECT line, external_id, original_batch, original_line FROM rows WHERE batch_id = $1 AND original_batch IS NOT NULL ORDER BY line', [batchId]);
  }

  async setCorrectsBatch(batchId: string, original: string): Promise<void> {
    await this.run('UPDATE batches SET corrects_batch = $1 WHERE id = $2', [original, batchId]);
  }

  async correctionsOf(batchId: string, line: number): Promise<RowRecord[]> {
    return (await this.all<RowColumns>(`SELECT ${ROW_RECORD_COLUMNS} FROM rows WHERE original_batch = $1 AND original_line = $2 ORDER BY batch_id, line`, [batchId, line])).map(toRowRecord);
  }

  async *rows(batchId: string): AsyncIterable<RowRecord> {
    for (let after = 0; ; ) {
      const rows = await this.all<RowColumns>(`SELECT ${ROW_RECORD_COLUMNS} FROM rows WHERE batch_id = $1 AND line > $2 ORDER BY line LIMIT 1000`, [batchId, after]);
      if (rows.length === 0) return;
      for (const row of rows) {
        yield toRowRecord(row);
      }
      after = (rows[rows.length - 1] as RowColumns).line;
    }
  }

  // ---- reconciliation

  async ledgerRows(scope: ReportScope): Promise<LedgerRow[]> {
    const columns = `r.batch_id, r.line, r.external_id, r.transaction_id, r.phase, r.outcome, r.outcome_detail, r.state, r.state_reason, r.state_reason_code,
      r.input_amount, r.input_currency, r.output_amount, r.output_currency, r.refunded_amount, r.errors,
      COALESCE(r.created_at, b.received_at) AS created_at, r.funded_at, r.paid_at, r.refunded_at, r.observed_at,
      r.recipient_name, r.settled_at, r.original_batch, r.original_line`;
    if ('batch' in scope) {
      return this.all<LedgerRow>(`SELECT ${columns} FROM rows r JOIN batches b ON b.id = r.batch_id WHERE r.batch_id = $1 ORDER BY r.batch_id, r.line`, [scope.batch]);
    }
    return this.all<LedgerRow>(`SELECT ${columns} FROM rows r JOIN batches b ON b.id = r.batch_id
      WHERE (r.funded_at < $2 AND (r.paid_at IS NULL OR r.paid_at >= $1) AND (r.refunded_at IS NULL OR r.refunded_at >= $1))
         OR ((r.outcome IN ${REFUSALS} OR r.phase = 'held') AND COALESCE(r.created_at, b.received_at) >= $1 AND COALESCE(r.created_at, b.received_at) < $2)
      ORDER BY r.batch_id, r.line`, [scope.from, scope.to]);
  }

  async knowsTransaction(transactionId: string): Promise<boolean> {
    return (await this.first('SELECT 1 FROM rows WHERE transaction_id = $1 LIMIT 1', [transactionId])) !== undefined;
  }

  // ---- webhooks and schedules

  async recordWebhookEvent(event: Omit<WebhookEvent, 'id'>): Promise<number | 'replayed'> {
    // The nonce is unique across every worker's receiver: a delivery replayed to another worker is refused there too.
    const inserted = await this.first<{ id: number }>(`INSERT INTO webhook_events (received_at, nonce, webhook_id, event_type, object_id, body)
      VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (nonce) DO NOTHING RETURNING id`,
    [event.received_at, event.nonce, event.webhook_id, event.event_type, event.object_id, event.body]);
    return inserted ? inserted.id : 'replayed';
  }

  async unappliedWebhookEvents(limit: number): Promise<WebhookEvent[]> {
    return this.all<WebhookEvent>(`SELECT e.* FROM webhook_events e LEFT JOIN webhook_event_outcomes o ON o.event_id = e.id
      WHERE o.event_id IS NULL ORDER BY e.id LIMIT $1`, [limit]);
  }

  async recordWebhookOutcome(eventId: number, outcome: string, at: string): Promise<void> {
    await this.run('INSERT INTO webhook_event_outcomes (event_id, outcome, applied_at) VALUES ($1, $2, $3) ON CONFLICT (event_id) DO NOTHING', [eventId, outcome, at]);
  }

  async webhookEventCounts(): Promise<WebhookEventCounts> {
    const received = (await this.first<{ n: number }>('SELECT COUNT(*)::int AS n FROM webhook_events'))?.n ?? 0;
    const outcomes = await this.all<{ outcome: string; n: number }>('SELECT outcome, COUNT(*)::int AS n FROM webhook_event_outcomes GROUP BY outcome ORDER BY outcome');
    const applied = outcomes.reduce((sum, o) => sum + o.n, 0);
    return { received, pending: received - applied, outcomes: Object.fromEntries(outcomes.map((o) => [o.outcome, o.n])) };
  }

  async lastScheduleRun(name: string): Promise<number | null> {
    return (await this.first<{ last_run_at: number }>('SELECT last_run_at FROM schedule_runs WHERE name = $1', [name]))?.last_run_at ?? null;
  }

  async claimScheduleRun(name: string, expected: number | null, at: number): Promise<boolean> {
    if (expected === null) return (await this.run('INSERT INTO schedule_runs (name, last_run_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, at])) === 1;
    return (await this.run('UPDATE schedule_runs SET last_run_at = $1 WHERE name = $2 AND last_run_at = $3', [at, name, expected])) === 1;
  }

  // ---- the workspace lease (one holder; workers sharing the work use worker leases instead)

  async acquireLease(me: LeaseHolder, isAlive: (holder: LeaseHolder) => boolean, staleAfterMs: number): Promise<LeaseHolder | null> {
    return this.tx(async (c) => {
      await c.query('SELECT pg_advisory_xact_lock($1)', [LEASE_LOCK]);
      const held = await this.first<LeaseHolder>('SELECT token, holder, pid, host, acquired_at, renewed_at FROM workspace_lease WHERE id = 1', [], c);
      if (held && held.token !== me.token && me.renewed_at - held.renewed_at < staleAfterMs && isAlive(held)) return held;
      await c.query(`INSERT INTO workspace_lease (id, token, holder, pid, host, acquired_at, renewed_at) VALUES (1, $1, $2, $3, $4, $5, $6)
        ON CONFLICT (id) DO UPDATE SET token = excluded.token, holder = excluded.holder, pid = excluded.pid, host = excluded.host,
          acquired_at = excluded.acquired_at, renewed_at = excluded.renewed_at`, [me.token, me.holder, me.pid, me.host, me.acquired_at, me.renewed_at]);
      return null;
    });
  }

  async renewLease(token: string, at: number): Promise<boolean> {
    return (await this.run('UPDATE workspace_lease SET renewed_at = $1 WHERE id = 1 AND token = $2', [at, token])) === 1;
  }

  async releaseLease(token: string): Promise<void> {
    await this.run('DELETE FROM workspace_lease WHERE id = 1 AND token = $1', [token]);
  }

  // ---- approvals

  async requestApproval(batchId: string, submittedBy: string, expiresAt: string): Promise<void> {
    await this.run("UPDATE batches SET submitted_by = $1, approval = 'awaiting', approval_expires_at = $2 WHERE id = $3", [submittedBy, expiresAt, batchId]);
  }

  async recordApproval(record: Omit<ApprovalRecord, 'id'>): Promise<void> {
    await this.run('INSERT INTO approvals (batch_id, person, decision, statement, signature, reason, at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [record.batch_id, record.person, record.decision, record.statement, record.signature, record.reason, record.at]);
  }

  async deploymentId(): Promise<string> {
    return (await this.first<{ id: string }>('SELECT id FROM deployment WHERE one = 1', []))?.id as string;
  }

  async approvalsOf(batchId: string): Promise<ApprovalRecord[]> {
    return this.all<ApprovalRecord>('SELECT * FROM approvals WHERE batch_id = $1 ORDER BY id', [batchId]);
  }

  async decisionEntries(batchId: string): Promise<AuditEntry[]> {
    return this.all<AuditEntry>("SELECT * FROM audit_log WHERE subject = $1 AND action IN ('approved', 'rejected') ORDER BY seq", [batchId]);
  }

  async setApprovalState(batchId: string, state: string, reason: string | null): Promise<void> {
    await this.run('UPDATE batches SET approval = $1, approval_reason = $2 WHERE id = $3', [state, reason, batchId]);
  }

  async *acceptedRows(batchId: string): AsyncIterable<{ line: number; request: PayoutRequest }> {
    for (let after = 0; ; ) {
      const rows = await this.all<{ line: number; request: string }>(`SELECT line, request FROM rows WHERE batch_id = $1 AND line > $2 AND request IS NOT NULL
        AND phase NOT IN ('checking', 'invalid', 'refused') ORDER BY line LIMIT 1000`, [batchId, after]);
      if (rows.length === 0) return;
      for (const row of rows) yield { line: row.line, request: JSON.parse(row.request) as PayoutRequest };
      after = (rows[rows.length - 1] as { line: number }).line;
    }
  }

  // ---- the audit trail

  async appendAudit(entry: NewAuditEntry): Promise<void> {
    await this.tx((c) => this.appendAuditIn(c, entry));
  }

  async auditEntries(afterSeq: number, limit: number): Promise<AuditEntry[]> {
    return this.all<AuditEntry>('SELECT * FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2', [afterSeq, limit]);
  }

  async auditHead(except = ''): Promise<{ seq: number; hash: string }> {
    return (await this.first<{ seq: number; hash: string }>('SELECT seq, hash FROM audit_log WHERE action <> $1 ORDER BY seq DESC LIMIT 1', [except])) ?? { seq: 0, hash: GENESIS };
  }

  async lastAudit(action: string): Promise<AuditEntry | undefined> {
    return this.first<AuditEntry>('SELECT * FROM audit_log WHERE action = $1 ORDER BY seq DESC LIMIT 1', [action]);
  }

  // ---- possible duplicates (the queries are in duplicate-queries.ts)

  async recordRecipients(batchId: string, entries: readonly RecipientEntry[]): Promise<void> {
    await this.tx((c) => recordRecipientsPg(c, batchId, entries));
  }

  async twinsOf(query: TwinQuery, since: string, limit: number): Promise<Twin[]> {
    return twinsOfPg(this.pool, query, since, limit);
  }

  async batchTwins(batchId: string, after: number, upto: number, since: string): Promise<(Twin & { of_line: number })[]> {
    return batchTwinsPg(this.pool, batchId, after, upto, since);
  }

  async recordPossibleDuplicates(found: Parameters<DuplicateStore['recordPossibleDuplicates']>[0]): Promise<void> {
    await this.tx((c) => recordPossibleDuplicatesPg(c, found));
  }

  async possibleDuplicates(batchId: string): Promise<PossibleDuplicate[]> {
    return possibleDuplicatesPg(this.pool, batchId);
  }

  async heldDuplicates(limit: number): Promise<PossibleDuplicate[]> {
    return heldDuplicatesPg(this.pool, limit);
  }

  async endHeldDuplicates(batchId: string, outcome: string | null, detail: string | null): Promise<number> {
    return endHeldDuplicatesPg(this.pool, batchId, outcome, detail);
  }

  async allowDuplicate(batchId: string, line: number, allowance: Allowance): Promise<boolean> {
    return this.tx((c) => allowDuplicatePg(c, batchId, line, allowance, (entry) => this.appendAuditIn(c, entry)));
  }
}
