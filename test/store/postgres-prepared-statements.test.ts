/**
 * Statements prepared once per connection, on a real PostgreSQL server: the
 * store's connection prepares a statement on its first call and reuses it
 * after (pg_prepared_statements, on the pool's one connection), inside
 * transactions too; with store.prepared_statements off it prepares none. And
 * why a `SELECT *` is never prepared: the server refuses the prepared one once
 * a column is added to its table, as a newer worker's migration may do. And
 * that each is planned for its values every time (a generic plan walked every
 * earlier payment of an account in the possible-duplicate screen).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgConnection } from '../../src/store/postgres/client.js';
import { poolConfig } from '../../src/store/postgres/postgres-store.js';
import { freshDatabase, postgresAvailable } from '../helpers/postgres.js';
import type { FreshDatabase } from '../helpers/postgres.js';

const available = await postgresAvailable('the tests of prepared statements');

describe.skipIf(!available)('statements prepared once per connection (PostgreSQL)', () => {
  let database: FreshDatabase;
  beforeAll(async () => {
    database = await freshDatabase();
    const c = new pg.Client({ connectionString: database.url });
    await c.connect();
    await c.query('CREATE TABLE things (id INTEGER PRIMARY KEY, label TEXT NOT NULL)');
    await c.query("INSERT INTO things VALUES (1, 'one'), (2, 'two')");
    await c.end();
  });
  afterAll(async () => database?.drop());

  /**
   * A connection on a pool of one connection as the store makes it, so that the server's view of prepared statements is
   * the same session's.
   */
  async function withOneConnection<T>(prepare: boolean, work: (c: PgConnection) => Promise<T>): Promise<T> {
    const pool = new pg.Pool(poolConfig(database.url, 1));
    try {
      return await work(new PgConnection(pool, pool, prepare));
    } finally {
      await pool.end();
    }
  }

  /** The statements the store prepared on this connection, this look-up (itself prepared) left out. */
  const prepared = (c: PgConnection): Promise<string[]> =>
    c.all<{ name: string }>("SELECT name FROM pg_prepared_statements WHERE name LIKE 'pb\\_%' AND statement NOT LIKE '%pg_prepared_statements%' ORDER BY name")
      .then((rows) => rows.map((r) => r.name));

  it('prepares a statement with parameters on its first call, reuses it on the next, in and out of a transaction', async () => {
    await withOneConnection(true, async (c) => {
      expect(await prepared(c)).toEqual([]);
      expect(await c.first<{ label: string }>('SELECT label FROM things WHERE id = ?', [1])).toEqual({ label: 'one' });
      const once = await prepared(c);
      expect(once).toHaveLength(1);
      // Each later call, here and in a transaction on the same connection, runs the same prepared statement.
      expect(await c.first<{ label: string }>('SELECT label FROM things WHERE id = ?', [2])).toEqual({ label: 'two' });
      await c.tx(async (tx) => {
        expect(await tx.first<{ label: string }>('SELECT label FROM things WHERE id = ?', [1])).toEqual({ label: 'one' });
        await tx.run('UPDATE things SET label = ? WHERE id = ?', ['uno', 1]);
      });
      const after = await prepared(c);
      expect(after).toHaveLength(2);
      expect(after).toEqual(expect.arrayContaining(once));
      expect(await c.first<{ label: string }>('SELECT label FROM things WHERE id = ?', [1])).toEqual({ label: 'uno' });
      // `*` is never prepared.
      await c.all('SELECT * FROM things WHERE id = ?', [1]);
      expect(await prepared(c)).toEqual(after);
    });
  });

  it('plans a prepared statement for its values on every call: no generic plan, however many calls', async () => {
    await withOneConnection(true, async (c) => {
      expect(await c.first<{ plan_cache_mode: string }>('SHOW plan_cache_mode')).toEqual({ plan_cache_mode: 'force_custom_plan' });
      for (let i = 0; i < 8; i++) await c.first('SELECT label FROM things WHERE id = ?', [1 + (i % 2)]);
      const plans = await c.first<{ generic_plans: number; custom_plans: number }>(
        "SELECT generic_plans::int, custom_plans::int FROM pg_prepared_statements WHERE statement = 'SELECT label FROM things WHERE id = $1'",
      );
      expect(plans).toEqual({ generic_plans: 0, custom_plans: 8 });
    });
  });

  it('prepares nothing with store.prepared_statements off', async () => {
    await withOneConnection(false, async (c) => {
      expect(await c.first<{ label: string }>('SELECT label FROM things WHERE id = ?', [2])).toEqual({ label: 'two' });
      await c.tx((tx) => tx.run('UPDATE things SET label = ? WHERE id = ?', ['two', 2]));
      expect(await prepared(c)).toEqual([]);
    });
  });

  it('a prepared `SELECT *` is refused once a column is added (why none is prepared); the store\'s own reads go on', async () => {
    const raw = new pg.Client({ connectionString: database.url });
    await raw.connect();
    try {
      await raw.query({ name: 'star', text: 'SELECT * FROM things WHERE id = $1', values: [2] });
      await withOneConnection(true, async (c) => {
        expect(await c.all('SELECT * FROM things WHERE id = ?', [2])).toHaveLength(1);
        await c.run('ALTER TABLE things ADD COLUMN added TEXT');
        // The store's statements: `*` sent unnamed, read afresh; a named one of named columns, replanned by the server.
        expect(await c.first('SELECT * FROM things WHERE id = ?', [2])).toEqual({ id: 2, label: 'two', added: null });
        expect(await c.first('SELECT label FROM things WHERE id = ?', [2])).toEqual({ label: 'two' });
      });
      await expect(raw.query({ name: 'star', text: 'SELECT * FROM things WHERE id = $1', values: [2] })).rejects.toThrow(/cached plan must not change result type/);
    } finally {
      await raw.end();
    }
  });
});
