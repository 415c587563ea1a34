/**
 * The schema's migrations from 16 on (possible duplicates, may_cancel, the
 * audit pages), in a file of their own for its length: MIGRATIONS
 * (migrations.ts) lists them after the first fifteen. Append-only, as there.
 */
import type { Migration } from './database.js';

export const MIGRATIONS_FROM_16: readonly Migration[] = [
  {
    version: 16,
    name: 'recipient accounts of rows, and possible duplicate payments',
    sql: `
      -- The recipient account each sendable row pays (src/validate/recipient-key.ts), with its amount and currency, found
      -- by all three together: an earlier row paying the same is a possible duplicate (src/engine/duplicates.ts).
      CREATE TABLE row_recipients (
        batch_id TEXT NOT NULL,
        line INTEGER NOT NULL,
        recipient_key TEXT NOT NULL,
        currency TEXT NOT NULL,
        amount TEXT NOT NULL,
        PRIMARY KEY (batch_id, line)
      ) WITHOUT ROWID;
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
    `,
  },
  {
    version: 17,
    name: 'the service\'s may_cancel per row, and one-time fills of data older than its column',
    sql: `
      -- Whether the service said, in the newest observation kept, that the transaction may be cancelled (1, 0), or
      -- null when it has not said (src/engine/advice.ts words a row's advice by it).
      ALTER TABLE rows ADD COLUMN may_cancel INTEGER;
      -- Fills of data stored before the code that writes it, done once at open (src/store/queries/recipient-backfill.ts):
      -- the recipient accounts of rows stored before migration 16.
      CREATE TABLE data_backfills (
        name TEXT PRIMARY KEY,
        done_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 18,
    name: 'audit pages by keyset: entries by batch and by action, and the verification kept',
    sql: `
      -- The batch an entry is about (src/audit/entry-batch.ts, the same rule), set when written: the audit page's filter.
      ALTER TABLE audit_log ADD COLUMN batch_id TEXT;
      UPDATE audit_log SET batch_id = CASE
        WHEN instr(subject, ' line ') > 0 THEN substr(subject, 1, instr(subject, ' line ') - 1)
        WHEN subject LIKE 'batch % %' THEN substr(subject, 7, instr(substr(subject, 7), ' ') - 1)
        WHEN json_valid(details) AND json_type(details, '$.batch') = 'text' THEN json_extract(details, '$.batch')
        WHEN length(subject) BETWEEN 1 AND 80 AND subject NOT GLOB '*[^A-Za-z0-9_-]*' AND subject NOT GLOB '[_-]*' THEN subject
      END;
      CREATE INDEX audit_log_batch ON audit_log(batch_id) WHERE batch_id IS NOT NULL;
      -- Not of the entries every row writes as it is sent (ROW_ACTIONS in queries/audit-pages.ts): those would put the
      -- index's pages into every commit of sending, and are dense enough to be found walking the trail back.
      CREATE INDEX audit_log_action ON audit_log(action) WHERE action NOT IN ('create_requested', 'fund_requested', 'state_learned');
      -- How far the chain was last verified (src/console/audit-kept.ts): a view verifies only the entries after it.
      CREATE TABLE audit_checkpoint (
        one INTEGER PRIMARY KEY CHECK (one = 1),
        seq INTEGER NOT NULL,
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
    `,
  },
];
