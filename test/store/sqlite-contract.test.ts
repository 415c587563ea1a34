/** The store contract against SQLite: a fresh file per test. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { storeContract } from './contract.js';
import { duplicateContract } from './duplicate-contract.js';

const openSqlite = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-contract-'));
  let store = SqliteStore.open(join(dir, 'paybatch.db'));
  return {
    store,
    async exec(sql: string) {
      store.db.exec(sql);
    },
    async rewindBeforeDuplicateCheck() {
      store.db.exec('DROP INDEX audit_log_batch; DROP INDEX audit_log_action; ALTER TABLE audit_log DROP COLUMN batch_id; DROP TABLE audit_checkpoint; DROP TABLE batch_summaries; DROP TABLE recipient_payments; DROP TABLE row_recipients; DROP TABLE possible_duplicates; DROP TABLE data_backfills; ALTER TABLE rows DROP COLUMN may_cancel; ALTER TABLE rows DROP COLUMN cancels_sent; ALTER TABLE rows DROP COLUMN cancel_sent_at; ALTER TABLE rows DROP COLUMN cancel_accepted_at; DELETE FROM schema_migrations WHERE version >= 16');
    },
    async rewindBeforePayments() {
      store.db.exec("DROP TABLE recipient_payments; CREATE INDEX row_recipients_payment ON row_recipients(recipient_key, currency, amount); DELETE FROM data_backfills WHERE name = 'recipient_payments'; DELETE FROM schema_migrations WHERE version >= 22");
    },
    async reopen() {
      await store.close();
      store = SqliteStore.open(join(dir, 'paybatch.db'));
      return store;
    },
    async done() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

storeContract('SQLite', openSqlite);
duplicateContract('SQLite', openSqlite);
