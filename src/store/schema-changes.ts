/**
 * The changes of schema both databases make, each written once as a named step
 * that gives its SQL for a dialect: shared-migrations.ts gives each the version
 * it has in SQLite's migrations and in PostgreSQL's. The tables of the first
 * schema both made alike are here too, placed by each database's first
 * migrations (sqlite/migrations.ts 1 to 8, postgres/migrations.ts 1).
 * These are released migrations: a step is never changed in what it makes
 * (test/store/schema-snapshot.test.ts holds both schemas); a new change is a new
 * step, or a migration of one database alone.
 *
 * The dialects differ in a few words, named in DIALECT: PostgreSQL's times in
 * ms and counts are BIGINT where SQLite's INTEGER holds 64 bits; its ids are
 * BIGSERIAL where SQLite's are AUTOINCREMENT rowids; a table keyed by its
 * primary key alone is WITHOUT ROWID in SQLite.
 */
export type Dialect = 'sqlite' | 'postgres';

/** One change of schema: its SQL for each database. */
export type SchemaChange = (dialect: Dialect) => string;

const DIALECT = {
  sqlite: {
    bigint: 'INTEGER',
    serialKey: 'INTEGER PRIMARY KEY AUTOINCREMENT',
    withoutRowid: ' WITHOUT ROWID',
    randomId: 'lower(hex(randomblob(16)))',
    // A SQLite index ends with the rowid, which audit_log's seq is: (batch_id) is already ordered by seq.
    thenSeq: '',
  },
  postgres: {
    bigint: 'BIGINT',
    serialKey: 'BIGSERIAL PRIMARY KEY',
    withoutRowid: '',
    randomId: 'md5(random()::text || clock_timestamp()::text || pg_backend_pid()::text)',
    thenSeq: ', seq',
  },
} as const;

/*
 * The tables of the first schema, made by SQLite's migrations 1 to 8 and by PostgreSQL's migration 1 in one, where
 * both made them alike: each with its comments, from the first to its last semicolon, placed by each migration on a
 * line of its own. The rows table's columns stand in a different order in each (PostgreSQL's has the columns SQLite added
 * later among them): the runs both have in the same order are written once here.
 */

/** The rows table's first columns: the row, what was asked, and where paybatch has got with it. */
export const ROW_REQUEST_COLUMNS = `
        batch_id TEXT NOT NULL REFERENCES batches(id),
        line INTEGER NOT NULL,
        external_id TEXT,
        request TEXT,
        phase TEXT NOT NULL,
        outcome TEXT,`.trimStart();

/** The rows table's columns of the service's answer: its errors, transaction, state and amounts. */
export const ROW_ANSWER_COLUMNS = `
        errors TEXT,
        transaction_id TEXT,
        state TEXT,
        state_reason TEXT,
        state_reason_code TEXT,
        input_amount TEXT,
        input_currency TEXT,
        output_amount TEXT,
        output_currency TEXT,`.trimStart();

/** SQLite 2, PostgreSQL 1. */
export const webhookEventTables: SchemaChange = (dialect) => {
  const d = DIALECT[dialect];
  return `
      -- Webhook deliveries as received, verified, before they were answered: append-only.
      CREATE TABLE webhook_events (
        id ${d.serialKey},
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
        event_id ${d.bigint} PRIMARY KEY REFERENCES webhook_events(id),
        outcome TEXT NOT NULL,
        applied_at TEXT NOT NULL
      );`.trimStart();
};

/** SQLite 4, PostgreSQL 1: the same in both. */
export const fundingStopsTable: SchemaChange = () => `
      -- The balance of a currency ran out: nothing more of the batch in that currency is created or funded.
      CREATE TABLE funding_stops (
        batch_id TEXT NOT NULL REFERENCES batches(id),
        currency TEXT NOT NULL,
        detail TEXT NOT NULL,
        stopped_at TEXT NOT NULL,
        PRIMARY KEY (batch_id, currency)
      );`.trimStart();

/** SQLite 6, PostgreSQL 1. */
export const workspaceLeaseTable: SchemaChange = (dialect) => {
  const d = DIALECT[dialect];
  return `
      -- One run or watch at a time in a workspace: a lease held in the database for the life of the process,
      -- renewed every few seconds; a file that can be emptied or deleted cannot fool it.
      CREATE TABLE workspace_lease (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        token TEXT NOT NULL,
        holder TEXT NOT NULL,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        acquired_at ${d.bigint} NOT NULL,
        renewed_at ${d.bigint} NOT NULL
      );`.trimStart();
};

/** SQLite 7, PostgreSQL 1. */
export const approvalsTable: SchemaChange = (dialect) => `
      -- Approvals and rejections as given: append-only. An approval is a signed statement; paybatch
      -- verifies it against the configured public keys every time, never trusting this table alone.
      CREATE TABLE approvals (
        id ${DIALECT[dialect].serialKey},
        batch_id TEXT NOT NULL REFERENCES batches(id),
        person TEXT NOT NULL,
        decision TEXT NOT NULL CHECK (decision IN ('approve', 'reject')),
        statement TEXT,
        signature TEXT,
        reason TEXT,
        at TEXT NOT NULL
      );
      CREATE INDEX approvals_batch ON approvals(batch_id);`.trimStart();

/** SQLite 8, PostgreSQL 1. */
export const auditLogTable: SchemaChange = (dialect) => `
      -- Append-only and hash-chained: each entry holds the hash of the one before and its own (src/audit/chain.ts).
      CREATE TABLE audit_log (
        seq ${DIALECT[dialect].serialKey},
        at TEXT NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        subject TEXT NOT NULL,
        details TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL
      );
      CREATE INDEX audit_log_at ON audit_log(at);`.trimStart();

/** SQLite 9, PostgreSQL 3. */
export const consoleSignInsAndOutbox: SchemaChange = (dialect) => {
  const d = DIALECT[dialect];
  return `
      -- One-time sign-in codes (from paybatch console login) and console sessions, kept only as SHA-256 hashes.
      CREATE TABLE console_credentials (
        hash TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('code', 'session')),
        person TEXT NOT NULL,
        created_at ${d.bigint} NOT NULL,
        expires_at ${d.bigint} NOT NULL,
        used_at ${d.bigint}
      );
      -- Notifications to deliver, durable: a crash never loses one, and each is sent once per channel (dedupe_key).
      CREATE TABLE notifications (
        id ${d.serialKey},
        channel TEXT NOT NULL,
        event TEXT NOT NULL,
        dedupe_key TEXT NOT NULL,
        payload TEXT NOT NULL,
        created_at ${d.bigint} NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at ${d.bigint} NOT NULL,
        delivered_at ${d.bigint},
        given_up_at ${d.bigint},
        last_error TEXT,
        UNIQUE (channel, dedupe_key)
      );
      CREATE INDEX notifications_due ON notifications(next_attempt_at) WHERE delivered_at IS NULL AND given_up_at IS NULL;
    `;
};

/** SQLite 10, PostgreSQL 4: the same in both. */
export const correctionsAndResults: SchemaChange = () => `
      -- A correction's row names the row it pays again (src/engine/corrections.ts); its batch names the batch it corrects.
      ALTER TABLE rows ADD COLUMN original_batch TEXT;
      ALTER TABLE rows ADD COLUMN original_line INTEGER;
      -- The recipient's name as sent, for the results.
      ALTER TABLE rows ADD COLUMN recipient_name TEXT;
      -- An invalid row's values as read (it has no request), for its corrections file.
      ALTER TABLE rows ADD COLUMN invalid_fields TEXT;
      ALTER TABLE batches ADD COLUMN corrects_batch TEXT;
      CREATE INDEX rows_original ON rows(original_batch, original_line) WHERE original_batch IS NOT NULL;
    `;

/** SQLite 11, PostgreSQL 5. */
export const batchCorridors: SchemaChange = (dialect) => {
  const d = DIALECT[dialect];
  return `
      -- The distinct corridors of a batch's accepted rows, written as its rows are made ready: what the corridor check
      -- before sending needs is read here, not by parsing every row of the batch (src/engine/pipeline.ts). Batches
      -- accepted before this table are summarised at their next send, from their rows still ready then.
      CREATE TABLE batch_corridors (
        batch_id TEXT NOT NULL REFERENCES batches(id),
        country_code TEXT NOT NULL,
        type TEXT NOT NULL,
        input_currency TEXT NOT NULL,
        output_currency TEXT NOT NULL,
        rows ${d.bigint} NOT NULL,
        PRIMARY KEY (batch_id, country_code, type, input_currency, output_currency)
      )${d.withoutRowid};
    `;
};

/** SQLite 12, PostgreSQL 6: the same in both. */
export const rowsUnscheduled: SchemaChange = () => `
      -- A crash between two steps can leave a row followed with no read due; every start looks for such rows. This
      -- index holds only them (none, most of the time), so that the look costs nothing however large the batch.
      CREATE INDEX rows_unscheduled ON rows(batch_id) WHERE phase IN ('created', 'funded', 'cancelling') AND next_read_at IS NULL;
    `;

/**
 * SQLite 14, PostgreSQL 8. The entries already written keep version 1, every new one is version 2: SQLite sets the
 * existing ones after adding the column at the new default; PostgreSQL adds it at 1, then changes the default.
 */
export const auditVersionsAndDecisions: SchemaChange = (dialect) => `
      -- How an entry's hash encodes it (src/audit/chain.ts): the entries already written keep version 1, fields joined by
      -- newlines; every entry from now on is version 2, a JSON array that no moved newline can read two ways. The default
      -- is the version written now, so that an entry is never taken for the ambiguous encoding by omission.
      ${dialect === 'sqlite'
    ? 'ALTER TABLE audit_log ADD COLUMN version INTEGER NOT NULL DEFAULT 2;\n      UPDATE audit_log SET version = 1;'
    : 'ALTER TABLE audit_log ADD COLUMN version INTEGER NOT NULL DEFAULT 1;\n      ALTER TABLE audit_log ALTER COLUMN version SET DEFAULT 2;'}
      -- The approval gate looks up the entries recording a batch's approvals and rejections (src/engine/approval-records.ts);
      -- only those entries are in this index, so the entries written as rows are sent cost it nothing.
      CREATE INDEX audit_log_decisions ON audit_log(subject) WHERE action IN ('approved', 'rejected');
    `;

/** SQLite 15, PostgreSQL 9. */
export const deploymentAndSealedRelease: SchemaChange = (dialect) => `
      -- A random identity made at first start: a signed approval names it, so that approvals copied from another
      -- workspace's database (the same file gets the same batch id there) do not verify here (src/approvals/statement.ts).
      CREATE TABLE deployment (
        one INTEGER PRIMARY KEY CHECK (one = 1),
        id TEXT NOT NULL
      );
      INSERT INTO deployment (one, id) VALUES (1, ${DIALECT[dialect].randomId});
      -- When a batch under approvals was released, and a MAC of that by a key derived from the service's secret: the
      -- time an approval is checked against after a restart (the released column alone proves nothing).
      ALTER TABLE batches ADD COLUMN released_at TEXT;
      ALTER TABLE batches ADD COLUMN release_seal TEXT;
    `;

/** SQLite 16, PostgreSQL 10. */
export const recipientsAndDuplicates: SchemaChange = (dialect) => `
      -- The recipient account each sendable row pays (src/validate/recipient-key.ts), with its amount and currency, found
      -- by all three together: an earlier row paying the same is a possible duplicate (src/engine/duplicates.ts).
      CREATE TABLE row_recipients (
        batch_id TEXT NOT NULL,
        line INTEGER NOT NULL,
        recipient_key TEXT NOT NULL,
        currency TEXT NOT NULL,
        amount TEXT NOT NULL,
        PRIMARY KEY (batch_id, line)
      )${DIALECT[dialect].withoutRowid};
      CREATE INDEX row_recipients_payment ON row_recipients(recipient_key, currency, amount);
      -- Each row found a possible duplicate, with the earlier twin it was found with as it stood then, what was done
      -- (hold, warn), and who allowed it and why (paybatch allow).
      CREATE TABLE possible_duplicates (
        batch_id TEXT NOT NULL,
        line INTEGER NOT NULL,
        external_id TEXT,
        twin_batch TEXT NOT NULL,
        twin_line INTEGER NOT NULL,
        twin_external_id TEXT,
        twin_state TEXT NOT NULL,
        twin_at TEXT NOT NULL,
        action TEXT NOT NULL,
        detail TEXT NOT NULL,
        allowed_by TEXT,
        allowed_reason TEXT,
        allowed_at TEXT,
        PRIMARY KEY (batch_id, line)
      );
    `;

/** SQLite 17, PostgreSQL 12: the same in both. */
export const mayCancelAndBackfills: SchemaChange = () => `
      -- Whether the service said, in the newest observation kept, that the transaction may be cancelled (1, 0), or
      -- null when it has not said (src/reports/advice.ts words a row's advice by it).
      ALTER TABLE rows ADD COLUMN may_cancel INTEGER;
      -- Fills of data stored before the code that writes it, done once at open (src/store/queries/recipient-backfill.ts):
      -- the recipient accounts of rows stored before row_recipients (recipientsAndDuplicates).
      CREATE TABLE data_backfills (
        name TEXT PRIMARY KEY,
        done_at TEXT NOT NULL
      );
    `;

/**
 * [D11] The cancellations sent for a row: how many since it entered cancelling, and when the last one went. A DELETE
 * that never reached the service (unanswered, or paybatch stopped between recording the intent and sending it) is sent
 * again on a later read that finds the transaction still cancellable (src/engine/decide.ts, cancelAgain).
 */
export const cancelsSent: SchemaChange = () => `
      ALTER TABLE rows ADD COLUMN cancels_sent INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE rows ADD COLUMN cancel_sent_at TEXT;
    `;

/**
 * [D11] When the service accepted a row's cancellation (answered 202): it then proceeds on its own, and is not sent
 * again however long the service takes. And the count of rows already cancelling before the count was kept: their
 * first DELETE went when they entered cancelling, at a time not recorded; the last time the service was heard of them
 * stands for it, so that a send again waits its interval and three sends stay three.
 */
export const cancelAccepted: SchemaChange = () => `
      ALTER TABLE rows ADD COLUMN cancel_accepted_at TEXT;
      UPDATE rows SET cancels_sent = 1, cancel_sent_at = COALESCE(heard_at, observed_at, created_at) WHERE phase = 'cancelling' AND cancels_sent = 0;
    `;

/** The batch an existing entry is about (src/audit/entry-batch.ts, the same rule), in each database's functions. */
const ENTRY_BATCH: Record<Dialect, string> = {
  sqlite: `
        WHEN instr(subject, ' line ') > 0 THEN substr(subject, 1, instr(subject, ' line ') - 1)
        WHEN subject LIKE 'batch % %' THEN substr(subject, 7, instr(substr(subject, 7), ' ') - 1)
        WHEN json_valid(details) AND json_type(details, '$.batch') = 'text' THEN json_extract(details, '$.batch')
        WHEN length(subject) BETWEEN 1 AND 80 AND subject NOT GLOB '*[^A-Za-z0-9_-]*' AND subject NOT GLOB '[_-]*' THEN subject`,
  postgres: `
        WHEN strpos(subject, ' line ') > 0 THEN left(subject, strpos(subject, ' line ') - 1)
        WHEN subject LIKE 'batch % %' THEN split_part(substr(subject, 7), ' ', 1)
        WHEN details ~ '^\\{"batch":"[A-Za-z0-9_-]{1,80}"[,}]' THEN substring(details from '^\\{"batch":"([A-Za-z0-9_-]{1,80})"')
        WHEN subject ~ '^[A-Za-z0-9][A-Za-z0-9_-]{0,79}$' THEN subject`,
};

/** SQLite 18, PostgreSQL 13. */
export const auditPages: SchemaChange = (dialect) => {
  const d = DIALECT[dialect];
  return `
      -- The batch an entry is about (src/audit/entry-batch.ts, the same rule), set when written: the audit page's filter.
      ALTER TABLE audit_log ADD COLUMN batch_id TEXT;
      UPDATE audit_log SET batch_id = CASE${ENTRY_BATCH[dialect]}
      END;
      CREATE INDEX audit_log_batch ON audit_log(batch_id${d.thenSeq}) WHERE batch_id IS NOT NULL;
      -- Not of the entries every row writes as it is sent (ROW_ACTIONS in queries/audit-pages.ts): those would put the
      -- index's pages into every commit of sending, and are dense enough to be found walking the trail back.
      CREATE INDEX audit_log_action ON audit_log(action${d.thenSeq}) WHERE action NOT IN ('create_requested', 'fund_requested', 'state_learned');
      -- How far the chain was last verified (src/console/audit-kept.ts): a view verifies only the entries after it.
      CREATE TABLE audit_checkpoint (
        one INTEGER PRIMARY KEY CHECK (one = 1),
        seq ${d.bigint} NOT NULL,
        hash TEXT NOT NULL,
        verified_at TEXT,
        counts TEXT NOT NULL
      );
      INSERT INTO audit_checkpoint (one, seq, hash, counts) VALUES (1, 0, '${'0'.repeat(64)}', '{"actions":{},"batches":{}}');
      -- A settled batch's summary as the console shows it, kept while what it was made from stands (src/console/batch-kept.ts).
      CREATE TABLE batch_summaries (
        batch_id TEXT PRIMARY KEY,
        basis TEXT NOT NULL,
        summary TEXT NOT NULL
      );
    `;
};

/**
 * SQLite 21, PostgreSQL 16. From this version a row's request is kept compact (src/batch/request-text.ts). No table
 * changes: the version itself is the change. An older paybatch would take the compact form (a JSON array) for a
 * request and send it; seeing a version newer than it knows, it refuses the database instead (migration-plan.ts).
 */
export const compactRequests: SchemaChange = () => `
      -- A row's request is a JSON array of its values, each known by its place (src/batch/request-text.ts); rows stored
      -- before this version keep their JSON objects, read as they were.
      SELECT 1;
    `;

/** SQLite 22, PostgreSQL 17. */
export const recipientPayments: SchemaChange = (dialect) => `
      -- The recipient entries by payment (account, currency, amount), where the possible-duplicate check looks for twins:
      -- a table of its own, written in that order once a batch's rows are all stored (src/engine/duplicate-screen.ts),
      -- instead of an index of row_recipients written row by row as they were stored, each entry on a page of its own.
      CREATE TABLE recipient_payments (
        recipient_key TEXT NOT NULL,
        currency TEXT NOT NULL,
        amount TEXT NOT NULL,
        batch_id TEXT NOT NULL,
        line INTEGER NOT NULL,
        PRIMARY KEY (recipient_key, currency, amount, batch_id, line)
      )${DIALECT[dialect].withoutRowid};
      -- Filled from the entries kept before at the first open after this, in chunks (src/store/queries/recipient-backfill.ts):
      -- one migration is one transaction, and a long history copied in one would take the write-ahead log past its bound.
      DROP INDEX row_recipients_payment;
    `;
