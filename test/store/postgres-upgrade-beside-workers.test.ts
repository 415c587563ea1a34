/**
 * Upgrading a shared database while workers of the earlier release run: the
 * migration from which requests are stored compact (PostgreSQL 16) is not
 * applied while a worker holds a live lease, since that worker would go on
 * claiming rows whose requests it cannot read. Nothing is changed; once no
 * lease is live (the workers stopped, or a killed one's lease ran out), the
 * same start migrates.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { DatabaseUnusable } from '../../src/errors.js';
import { migratePg } from '../../src/store/postgres/migrate.js';
import { PG_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { FreshDatabase } from '../helpers/postgres.js';
import { freshDatabase, postgresAvailable } from '../helpers/postgres.js';

const postgres = await postgresAvailable('the upgrade beside running workers');
const COMPACT = PG_MIGRATIONS.findIndex((m) => m.earlierWorkersMustStop !== undefined) + 1;

describe.skipIf(!postgres)('an upgrade of a shared database beside workers of the earlier release', () => {
  let database: FreshDatabase | undefined;
  afterEach(async () => {
    await database?.drop();
    database = undefined;
  });

  it('is refused, naming them, while one holds a live lease; applied once none does', async () => {
    expect(COMPACT).toBe(16);
    database = await freshDatabase();
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    try {
      // The database as the earlier release left it, with two of its workers: one live, one whose lease ran out.
      await migratePg(pool, PG_MIGRATIONS.slice(0, COMPACT - 1));
      const now = Date.now();
      await pool.query(`INSERT INTO workers (name, token, host, pid, started_at, renewed_at, expires_at) VALUES
        ('pay-1', 't1', 'host-a', 4242, $1, $1, $2), ('pay-2', 't2', 'host-b', 77, $1, $1, $3)`, [now - 60_000, now + 60_000, now - 1]);
      const ledger = async (): Promise<number> => Number((await pool.query('SELECT MAX(version) AS v FROM pg_schema_migrations')).rows[0].v);

      const refused = await PostgresStore.open(database.url).then(() => null, (error: unknown) => error);
      expect(refused).toBeInstanceOf(DatabaseUnusable);
      expect((refused as Error).message).toMatch(/^a worker of an earlier paybatch is running on this database: pay-1 \(pid 4242 on host-a\); from this version requests are stored in a form earlier releases would misread: stop every worker, then start this version .*nothing was changed$/);
      expect((refused as Error).message).not.toMatch(/pay-2/);
      expect(await ledger()).toBe(COMPACT - 1);

      // Stopped: its lease ended. The same start now migrates.
      await pool.query("UPDATE workers SET expires_at = 0 WHERE name = 'pay-1'");
      const store = await PostgresStore.open(database.url);
      await store.close();
      expect(await ledger()).toBe(PG_MIGRATIONS.length);
    } finally {
      await pool.end();
    }
  });
});
