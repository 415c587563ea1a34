/**
 * The PostgreSQL schema, as numbered, append-only migrations with their own
 * ledger (pg_schema_migrations), each applied in its own transaction. The same
 * tables as SQLite's, in PostgreSQL's types: amounts stay integer strings
 * (compared and summed exactly as numeric), times ISO 8601 text, so that every
 * query reads the same on both. The tables and changes SQLite makes too are
 * written once in ../schema-changes.ts.
 */
import type { Migration } from '../migration-plan.js';
import * as change from '../schema-changes.js';
import { withSharedMigrations } from '../shared-migrations.js';

export const PG_MIGRATIONS: readonly Migration[] = withSharedMigrations('postgres', [
  {
    version: 1,
    name: 'paybatch schema (as SQLite migrations 1 to 8)',
    sql: `
      CREATE TABLE batches (
        id TEXT PRIMARY KEY,
        file_name TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        size_bytes BIGINT NOT NULL,
        status TEXT NOT NULL,
        policy TEXT NOT NULL,
        rows_total INTEGER NOT NULL DEFAULT 0,
        rows_valid INTEGER NOT NULL DEFAULT 0,
        reason TEXT,
        funding_stopped INTEGER NOT NULL DEFAULT 0,
        received_at TEXT NOT NULL,
        settled_at TEXT,
        changes_by_webhook INTEGER NOT NULL DEFAULT 0,
        changes_by_polling INTEGER NOT NULL DEFAULT 0,
        changes_by_answer INTEGER NOT NULL DEFAULT 0,
        file_mtime_ms BIGINT,
        send_after BIGINT NOT NULL DEFAULT 0,
        released INTEGER NOT NULL DEFAULT 0,
        submitted_by TEXT,
        approval TEXT,
        approval_expires_at TEXT,
        approval_reason TEXT
      );
      CREATE INDEX batches_sha256 ON batches(sha256);
      CREATE INDEX batches_status ON batches(status);

      CREATE TABLE rows (
        ${change.ROW_REQUEST_COLUMNS}
        outcome_detail TEXT,
        ${change.ROW_ANSWER_COLUMNS}
        refunded_amount TEXT,
        created_at TEXT,
        funded_at TEXT,
        paid_at TEXT,
        refunded_at TEXT,
        settled_at TEXT,
        observed_at TEXT,
        heard_at TEXT,
        reads INTEGER NOT NULL DEFAULT 0,
        next_read_at BIGINT,
        fund_attempts INTEGER NOT NULL DEFAULT 0,
        revision INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (batch_id, line)
      );
      CREATE UNIQUE INDEX rows_submitted_external_id ON rows(external_id) WHERE phase NOT IN ('checking', 'invalid', 'refused', 'not_sent');
      CREATE INDEX rows_batch_phase ON rows(batch_id, phase);
      CREATE INDEX rows_transaction_id ON rows(transaction_id) WHERE transaction_id IS NOT NULL;
      CREATE INDEX rows_funded_at ON rows(funded_at) WHERE funded_at IS NOT NULL;
      CREATE INDEX rows_due_reads ON rows(next_read_at) WHERE phase IN ('created', 'funded', 'cancelling') AND next_read_at IS NOT NULL;

      ${change.webhookEventTables('postgres')}
      CREATE TABLE schedule_runs (name TEXT PRIMARY KEY, last_run_at BIGINT NOT NULL);
      ${change.fundingStopsTable('postgres')}
      CREATE TABLE heartbeats (name TEXT PRIMARY KEY, at BIGINT NOT NULL);
      ${change.workspaceLeaseTable('postgres')}
      ${change.approvalsTable('postgres')}
      ${change.auditLogTable('postgres')}
    `,
  },
  {
    version: 2,
    name: 'work shared between workers: worker leases, claims of rows and webhook events, call slots, the takers of files and their bytes',
    sql: `
      CREATE TABLE workers (
        name TEXT PRIMARY KEY,
        token TEXT NOT NULL,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        started_at BIGINT NOT NULL,
        renewed_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
      );
      ALTER TABLE rows ADD COLUMN claimed_by TEXT;
      ALTER TABLE rows ADD COLUMN claimed_at BIGINT;
      -- One row per transaction, enforced by the database: two workers adopting one transaction id at once cannot both.
      DROP INDEX rows_transaction_id;
      CREATE UNIQUE INDEX rows_transaction_id ON rows(transaction_id) WHERE transaction_id IS NOT NULL;
      CREATE INDEX rows_claimed_by ON rows(claimed_by) WHERE claimed_by IS NOT NULL;
      ALTER TABLE batches ADD COLUMN taken_by TEXT;
      ALTER TABLE webhook_events ADD COLUMN claimed_by TEXT;
      CREATE TABLE call_slots (slot INTEGER PRIMARY KEY, worker TEXT, taken_at BIGINT);
      CREATE TABLE batch_files (
        batch_id TEXT NOT NULL REFERENCES batches(id),
        seq INTEGER NOT NULL,
        bytes BYTEA NOT NULL,
        PRIMARY KEY (batch_id, seq)
      );
    `,
  },
  // 3 to 6, 8 to 10, 12 to 16: the changes SQLite makes too (../shared-migrations.ts).
  {
    version: 7,
    name: 'the manifest that came with a taken file, kept beside its bytes',
    sql: `
      CREATE TABLE batch_manifests (
        batch_id TEXT PRIMARY KEY REFERENCES batches(id),
        text TEXT NOT NULL
      );
    `,
  },
  {
    version: 11,
    name: 'request-rate buckets shared by every worker (service.rate_limits)',
    sql: `
      -- One row per bucket (overall, create, fund, read, lookup, cancel): when its one token was last taken, in ms since
      -- the epoch (src/api/rate-bucket.ts, src/store/queries/rate-buckets.ts). PostgreSQL only: SQLite's one worker keeps
      -- its buckets in memory.
      CREATE TABLE rate_buckets (
        name TEXT PRIMARY KEY,
        last_taken_ms DOUBLE PRECISION NOT NULL
      );
    `,
  },
  {
    version: 18,
    name: 'state changes counted per connection, and audit entries chained by the database in one call',
    earlierWorkersMustStop: 'from this version state changes are counted beside the batch, and earlier releases, which read them on the batch\'s row only, would show fewer',
    sql: `
      -- The state changes each connection learned (webhook, polling, answer), by batch: counted here, not on the
      -- batch's own row, which every commit of every worker would otherwise wait for (src/store/postgres/learned.ts).
      -- A batch's counts are its row's (earlier releases') plus every connection's here.
      CREATE TABLE batch_learned (
        batch_id TEXT NOT NULL REFERENCES batches(id),
        backend INTEGER NOT NULL,
        changes_by_webhook BIGINT NOT NULL DEFAULT 0,
        changes_by_polling BIGINT NOT NULL DEFAULT 0,
        changes_by_answer BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (batch_id, backend)
      );
      -- An audit entry appended in one call: the chain's lock taken, the last hash read after it, the entry hashed
      -- over before || that hash || after (src/audit/chain.ts encodedAround) and inserted. The lock is held from here
      -- to the commit, one round trip shorter than three statements. Each statement of a volatile function reads
      -- what was committed before it began: the last hash is read after the lock is held (src/store/postgres/audit.ts).
      CREATE FUNCTION paybatch_append_audit(lock_key BIGINT, genesis TEXT, entry_version INTEGER, entry_at TEXT,
          entry_actor TEXT, entry_action TEXT, entry_subject TEXT, entry_details TEXT, entry_batch TEXT,
          hashed_before TEXT, hashed_after TEXT)
        RETURNS TABLE (prev_hash TEXT, hash TEXT) LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        last_hash TEXT;
        new_hash TEXT;
      BEGIN
        PERFORM pg_advisory_xact_lock(lock_key);
        SELECT a.hash INTO last_hash FROM audit_log a ORDER BY a.seq DESC LIMIT 1;
        last_hash := COALESCE(last_hash, genesis);
        new_hash := encode(sha256(convert_to(hashed_before || last_hash || hashed_after, 'UTF8')), 'hex');
        INSERT INTO audit_log (version, at, actor, action, subject, details, prev_hash, hash, batch_id)
          VALUES (entry_version, entry_at, entry_actor, entry_action, entry_subject, entry_details, last_hash, new_hash, entry_batch);
        RETURN QUERY SELECT last_hash, new_hash;
      END
      $fn$;
    `,
  },
]);
