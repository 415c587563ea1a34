/**
 * A statement prepared on a connection goes stale when another process changes the type of a column it returns
 * (PostgreSQL: 0A000 "cached plan must not change result type"). Sent unnamed (store.prepared_statements false), the
 * store's calls go on; prepared, a call inside a transaction fails on that connection for as long as it lives, since
 * a connection is given back to the pool unless it was lost (connection.ts). Pinned: after one failure, the store
 * recovers (the stale connection discarded, or the statement prepared again).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { freshDatabase, postgresAvailable } from '../helpers/postgres.js';
import type { FreshDatabase } from '../helpers/postgres.js';

const available = await postgresAvailable('the test of a stale prepared statement');

describe.skipIf(!available)('a prepared statement gone stale by a column type change (PostgreSQL)', () => {
  let database: FreshDatabase;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterAll(async () => database?.drop());

  const entry = (i: number) => ({ at: new Date().toISOString(), actor: 'test', action: 'configuration', subject: `s${i}`, details: { i } });

  it('appendAudit works again after another process changes audit_log.hash from TEXT to VARCHAR(64)', async () => {
    const store = await PostgresStore.open(database.url, { max: 1 });
    try {
      await store.appendAudit(entry(1));
      await store.appendAudit(entry(2));
      const other = new pg.Client({ connectionString: database.url });
      await other.connect();
      try {
        await other.query('ALTER TABLE audit_log ALTER COLUMN hash TYPE VARCHAR(64)');
      } finally {
        await other.end();
      }
      // The first call may fail (its transaction met the stale statement); the ones after must not.
      await store.appendAudit(entry(3)).catch(() => {});
      await expect(store.appendAudit(entry(4))).resolves.toBeUndefined();
      await expect(store.appendAudit(entry(5))).resolves.toBeUndefined();
    } finally {
      await store.close();
    }
  });
});
