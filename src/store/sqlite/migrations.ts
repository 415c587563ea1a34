/**
 * paybatch's schema, as numbered, append-only migrations (STYLE 4): a released
 * migration never changes what it makes; a change is a new one. From 9 on, most
 * are changes PostgreSQL makes too, written once in ../schema-changes.ts.
 *
 * Glossary: a *batch* is one file taken from the inbox; a *row* is one of its
 * lines, with its *phase* in paybatch's pipeline (checking, invalid, refused,
 * not_sent, ready, creating, created, funding, funded, cancelling, final) and,
 * once created, the service's *state* of its transaction.
 */
import type { Migration } from '../migration-plan.js';
import {
  auditPages, auditVersionsAndDecisions, batchCorridors, consoleSignInsAndOutbox, correctionsAndResults, deploymentAndSealedRelease,
  mayCancelAndBackfills, recipientsAndDuplicates, rowsUnscheduled,
} from '../schema-changes.js';

export const MIGRATIONS: readonly Migration[] = [
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
        batch_id TEXT NOT NULL REFERENCES batches(id),
        line INTEGER NOT NULL,
        external_id TEXT,
        request TEXT,
        phase TEXT NOT NULL,
        outcome TEXT,
        errors TEXT,
        transaction_id TEXT,
        state TEXT,
        state_reason TEXT,
        state_reason_code TEXT,
        input_amount TEXT,
        input_currency TEXT,
        output_amount TEXT,
        output_currency TEXT,
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
      -- Webhook deliveries as received, verified, before they were answered: append-only.
      CREATE TABLE webhook_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        received_at TEXT NOT NULL,
        -- [D3] A nonce is accepted once: a replay fails on this constraint and changes nothing.
        nonce TEXT NOT NULL UNIQUE,
        webhook_id TEXT,
        event_type TEXT NOT NULL,
        object_id TEXT,
        body TEXT NOT NULL
      );
      -- What applying each event did, written after it was applied: append-only too.
      -- An event with no line here is applied (again) after a restart; applying is idempotent.
      CREATE TABLE webhook_event_outcomes (
        event_id INTEGER PRIMARY KEY REFERENCES webhook_events(id),
        outcome TEXT NOT NULL,
        applied_at TEXT NOT NULL
      );
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
      -- The balance of a currency ran out: nothing more of the batch in that currency is created or funded.
      CREATE TABLE funding_stops (
        batch_id TEXT NOT NULL REFERENCES batches(id),
        currency TEXT NOT NULL,
        detail TEXT NOT NULL,
        stopped_at TEXT NOT NULL,
        PRIMARY KEY (batch_id, currency)
      );
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
      -- One run or watch at a time in a workspace: a lease held in the database for the life of the process,
      -- renewed every few seconds; a file that can be emptied or deleted cannot fool it.
      CREATE TABLE workspace_lease (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        token TEXT NOT NULL,
        holder TEXT NOT NULL,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        acquired_at INTEGER NOT NULL,
        renewed_at INTEGER NOT NULL
      );
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
      -- Approvals and rejections as given: append-only. An approval is a signed statement; paybatch
      -- verifies it against the configured public keys every time, never trusting this table alone.
      CREATE TABLE approvals (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        batch_id TEXT NOT NULL REFERENCES batches(id),
        person TEXT NOT NULL,
        decision TEXT NOT NULL CHECK (decision IN ('approve', 'reject')),
        statement TEXT,
        signature TEXT,
        reason TEXT,
        at TEXT NOT NULL
      );
      CREATE INDEX approvals_batch ON approvals(batch_id);
    `,
  },
  {
    version: 8,
    name: 'the audit trail',
    sql: `
      -- Append-only and hash-chained: each entry holds the hash of the one before and its own (src/audit/chain.ts).
      CREATE TABLE audit_log (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        at TEXT NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        subject TEXT NOT NULL,
        details TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL
      );
      CREATE INDEX audit_log_at ON audit_log(at);
    `,
  },
  { version: 9, name: 'console sign-ins and the notification outbox', sql: consoleSignInsAndOutbox('sqlite') },
  { version: 10, name: 'corrections and results an accountant can read', sql: correctionsAndResults('sqlite') },
  { version: 11, name: 'the corridors each batch uses', sql: batchCorridors('sqlite') },
  { version: 12, name: 'rows followed with no read scheduled', sql: rowsUnscheduled('sqlite') },
  {
    version: 13,
    name: 'no index of the audit trail by time',
    sql: `
      -- Nothing reads the trail by time (it is read in order of sequence), and each entry is written with the change it
      -- records: four a row sent, each also an entry in this index, whose last pages every commit wrote again.
      DROP INDEX IF EXISTS audit_log_at;
    `,
  },
  { version: 14, name: 'audit entries with a version, and approvals and rejections found by batch', sql: auditVersionsAndDecisions('sqlite') },
  { version: 15, name: 'the deployment approvals are for, and the sealed release of a batch', sql: deploymentAndSealedRelease('sqlite') },
  { version: 16, name: 'recipient accounts of rows, and possible duplicate payments', sql: recipientsAndDuplicates('sqlite') },
  { version: 17, name: 'the service\'s may_cancel per row, and one-time fills of data older than its column', sql: mayCancelAndBackfills('sqlite') },
  { version: 18, name: 'audit pages by keyset: entries by batch and by action, and the verification kept', sql: auditPages('sqlite') },
];
