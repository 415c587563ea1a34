/**
 * paybatch's schema, as numbered, append-only migrations (STYLE 4): a released
 * migration never changes what it makes; a change is a new one. The tables and
 * changes PostgreSQL makes too are written once in ../schema-changes.ts.
 *
 * Glossary: a *batch* is one file taken from the inbox; a *row* is one of its
 * lines, with its *phase* in paybatch's pipeline (checking, invalid, refused,
 * not_sent, ready, creating, created, funding, funded, cancelling, final) and,
 * once created, the service's *state* of its transaction.
 */
import type { Migration } from '../migration-plan.js';
import * as change from '../schema-changes.js';
import { withSharedMigrations } from '../shared-migrations.js';

export const MIGRATIONS: readonly Migration[] = withSharedMigrations('sqlite', [
  {
    version: 1,
    name: 'batches and rows',
    sql: `
      CREATE TABLE batches (
        id TEXT PRIMARY KEY,
        file_name TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        status TEXT NOT NULL,
        policy TEXT NOT NULL,
        rows_total INTEGER NOT NULL DEFAULT 0,
        rows_valid INTEGER NOT NULL DEFAULT 0,
        reason TEXT,
        -- Set when the balance ran out: nothing more of this batch is funded.
        funding_stopped INTEGER NOT NULL DEFAULT 0,
        received_at TEXT NOT NULL,
        settled_at TEXT
      );
      CREATE INDEX batches_sha256 ON batches(sha256);

      CREATE TABLE rows (
        ${change.ROW_REQUEST_COLUMNS}
        ${change.ROW_ANSWER_COLUMNS}
        created_at TEXT,
        funded_at TEXT,
        settled_at TEXT,
        observed_at TEXT,
        reads INTEGER NOT NULL DEFAULT 0,
        next_read_at INTEGER,
        PRIMARY KEY (batch_id, line)
      ) WITHOUT ROWID;
      -- An external_id is submitted once, ever: only rows that were or will be sent count.
      CREATE UNIQUE INDEX rows_submitted_external_id ON rows(external_id)
        WHERE phase NOT IN ('checking', 'invalid', 'refused', 'not_sent');
      CREATE INDEX rows_batch_phase ON rows(batch_id, phase);
    `,
  },
  {
    version: 2,
    name: 'webhook events, state sources, schedules',
    sql: `
      ${change.webhookEventTables('sqlite')}
      CREATE INDEX rows_transaction_id ON rows(transaction_id) WHERE transaction_id IS NOT NULL;
      -- How each batch learned of its state changes: by webhook, by polling, or in answers to its own calls.
      ALTER TABLE batches ADD COLUMN changes_by_webhook INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE batches ADD COLUMN changes_by_polling INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE batches ADD COLUMN changes_by_answer INTEGER NOT NULL DEFAULT 0;
      -- When each schedule of the daemon last ran, so that a run missed while it was down happens at start.
      CREATE TABLE schedule_runs (
        name TEXT PRIMARY KEY,
        last_run_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: 'money movement times for reconciliation',
    sql: `
      -- When the service says the payout was paid, and the refund made (its updated_at), and how much came back.
      ALTER TABLE rows ADD COLUMN paid_at TEXT;
      ALTER TABLE rows ADD COLUMN refunded_at TEXT;
      ALTER TABLE rows ADD COLUMN refunded_amount TEXT;
      UPDATE rows SET paid_at = COALESCE(observed_at, settled_at) WHERE state = 'paid';
      UPDATE rows SET refunded_at = COALESCE(observed_at, settled_at), refunded_amount = input_amount WHERE state = 'refunded';
      CREATE INDEX rows_funded_at ON rows(funded_at) WHERE funded_at IS NOT NULL;
    `,
  },
  {
    version: 4,
    name: 'compare-and-set revisions, funding stops per currency, reasons in words, heartbeats',
    sql: `
      -- Bumped by every committed change: a decision is applied only if the row has not moved since it was read.
      ALTER TABLE rows ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
      -- Funding calls made for the row, so that refusals are not retried in a loop.
      ALTER TABLE rows ADD COLUMN fund_attempts INTEGER NOT NULL DEFAULT 0;
      -- paybatch's reason in words: which limit, and both amounts.
      ALTER TABLE rows ADD COLUMN outcome_detail TEXT;
      -- When paybatch last heard of the transaction, by its own clock.
      ALTER TABLE rows ADD COLUMN heard_at TEXT;
      -- The input currency is known from the request before the service quotes it.
      UPDATE rows SET input_currency = json_extract(request, '$.input_currency_code') WHERE input_currency IS NULL AND request IS NOT NULL;
      ${change.fundingStopsTable('sqlite')}
      INSERT INTO funding_stops (batch_id, currency, detail, stopped_at)
        SELECT DISTINCT b.id, r.input_currency, 'the balance ran out', COALESCE(b.settled_at, b.received_at)
        FROM batches b JOIN rows r ON r.batch_id = b.id WHERE b.funding_stopped = 1 AND r.input_currency IS NOT NULL;
      -- The engine's last sign of life, so that a start knows how long it was down.
      CREATE TABLE heartbeats (
        name TEXT PRIMARY KEY,
        at INTEGER NOT NULL
      );
      -- What is due to be read is found by index, not by scanning the batch.
      CREATE INDEX rows_due_reads ON rows(next_read_at) WHERE phase IN ('created', 'funded', 'cancelling') AND next_read_at IS NOT NULL;
    `,
  },
  {
    version: 5,
    name: 'files whole: the claimed file watched before anything is sent',
    sql: `
      -- The claimed file's modification time, so that a change after intake is seen before anything is sent.
      ALTER TABLE batches ADD COLUMN file_mtime_ms INTEGER;
      -- Not sent before this time (ms): a file complete by stability alone is watched as long again once taken.
      ALTER TABLE batches ADD COLUMN send_after INTEGER NOT NULL DEFAULT 0;
      -- Rows are sent only once the batch is released (its file unchanged at send_after); older batches are.
      ALTER TABLE batches ADD COLUMN released INTEGER NOT NULL DEFAULT 1;
    `,
  },
  {
    version: 6,
    name: 'the workspace lease',
    sql: `
      ${change.workspaceLeaseTable('sqlite')}
    `,
  },
  {
    version: 7,
    name: 'four-eyes approvals',
    sql: `
      -- Who submitted the batch (the inbox's configured submitter), and where its approval stands:
      -- null (not needed), awaiting, approved, rejected, expired, held (an approval that does not verify).
      ALTER TABLE batches ADD COLUMN submitted_by TEXT;
      ALTER TABLE batches ADD COLUMN approval TEXT;
      ALTER TABLE batches ADD COLUMN approval_expires_at TEXT;
      ALTER TABLE batches ADD COLUMN approval_reason TEXT;
      ${change.approvalsTable('sqlite')}
    `,
  },
  {
    version: 8,
    name: 'the audit trail',
    sql: `
      ${change.auditLogTable('sqlite')}
    `,
  },
  // 9 to 12 and 14 to 21: the changes PostgreSQL makes too (../shared-migrations.ts).
  {
    version: 13,
    name: 'no index of the audit trail by time',
    sql: `
      -- Nothing reads the trail by time (it is read in order of sequence), and each entry is written with the change it
      -- records: four a row sent, each also an entry in this index, whose last pages every commit wrote again.
      DROP INDEX IF EXISTS audit_log_at;
    `,
  },
]);
