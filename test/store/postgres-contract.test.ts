/** The store contract against PostgreSQL: a fresh database per test, dropped after. */
import pg from 'pg';
import { describe } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { freshDatabase, postgresAvailable } from '../helpers/postgres.js';
import { storeContract } from './contract.js';
import { duplicateContract } from './duplicate-contract.js';

const available = await postgresAvailable('the PostgreSQL store contract');

describe.skipIf(!available)('PostgreSQL', () => {
  const openPostgres = async () => {
    const database = await freshDatabase();
    let store = await PostgresStore.open(database.url);
    return {
      store,
      async exec(sql: string) {
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        try {
          await client.query(sql);
        } finally {
          await client.end();
        }
      },
      async rewindBeforeDuplicateCheck() {
        await this.exec?.('DROP FUNCTION paybatch_append_audit; DROP TABLE batch_learned; DROP INDEX audit_log_batch; DROP INDEX audit_log_action; ALTER TABLE audit_log DROP COLUMN batch_id; DROP TABLE audit_checkpoint; DROP TABLE batch_summaries; DROP TABLE rate_buckets; DROP TABLE recipient_payments; DROP TABLE row_recipients; DROP TABLE possible_duplicates; DROP TABLE data_backfills; ALTER TABLE rows DROP COLUMN may_cancel; ALTER TABLE rows DROP COLUMN cancels_sent; ALTER TABLE rows DROP COLUMN cancel_sent_at; ALTER TABLE rows DROP COLUMN cancel_accepted_at; DELETE FROM pg_schema_migrations WHERE version >= 10');
      },
      async rewindBeforePayments() {
        await this.exec?.("DROP FUNCTION paybatch_append_audit; DROP TABLE batch_learned; DROP TABLE recipient_payments; CREATE INDEX row_recipients_payment ON row_recipients(recipient_key, currency, amount); DELETE FROM data_backfills WHERE name = 'recipient_payments'; DELETE FROM pg_schema_migrations WHERE version >= 17");
      },
      async reopen() {
        await store.close();
        store = await PostgresStore.open(database.url);
        return store;
      },
      async done() {
        await store.close();
        await database.drop();
      },
    };
  };
  storeContract('PostgreSQL', openPostgres);
  duplicateContract('PostgreSQL', openPostgres);
});
