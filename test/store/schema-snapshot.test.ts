/**
 * The schema a fresh database is migrated to, on both stores, against a
 * snapshot taken before the migrations' shared steps were written once
 * (src/store/schema-changes.ts): a released migration's text may change, the
 * schema it makes never. A new migration changes the schema on purpose: run
 * `npx vitest run test/store/schema-snapshot.test.ts -u` and read the diff of
 * test/store/schema/ in review. And where the two databases must agree, they
 * do: the same tables and columns, refusing null alike, with the same defaults,
 * but for what PostgreSQL alone has (work shared between workers) and the
 * differences named below.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { freshDatabase, postgresAvailable } from '../helpers/postgres.js';
import type { Columns } from './schema-dump.js';
import { postgresColumns, postgresSchema, sqliteColumns, sqliteSchema } from './schema-dump.js';

const available = await postgresAvailable('the PostgreSQL schema snapshot');
const dir = mkdtempSync(join(tmpdir(), 'paybatch-schema-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the schema of a fresh database', () => {
  it('SQLite: as in test/store/schema/sqlite.txt', async () => {
    const store = SqliteStore.open(join(dir, 'paybatch.db'));
    try {
      await expect(sqliteSchema(store.db)).toMatchFileSnapshot('schema/sqlite.txt');
    } finally {
      await store.close();
    }
  });

  it.skipIf(!available)('PostgreSQL: as in test/store/schema/postgres.txt', async () => {
    const database = await freshDatabase();
    try {
      await (await PostgresStore.open(database.url)).close();
      await expect(await postgresSchema(database.url)).toMatchFileSnapshot('schema/postgres.txt');
    } finally {
      await database.drop();
    }
  });

  it.skipIf(!available)('SQLite and PostgreSQL: the same tables and columns, but for what PostgreSQL alone has', async () => {
    const store = SqliteStore.open(join(dir, 'both.db'));
    const sqlite = sqliteColumns(store.db);
    await store.close();
    const database = await freshDatabase();
    let postgres: Columns;
    try {
      await (await PostgresStore.open(database.url)).close();
      postgres = await postgresColumns(database.url);
    } finally {
      await database.drop();
    }
    // Each database's ledger, and SQLite's own table of AUTOINCREMENT counters.
    for (const table of ['schema_migrations', 'sqlite_sequence']) delete sqlite[table];
    delete postgres.pg_schema_migrations;
    // Work shared between workers (PostgreSQL's migrations 2, 7, 11 and 18): SQLite has one worker.
    for (const table of ['workers', 'call_slots', 'batch_files', 'batch_manifests', 'rate_buckets', 'batch_learned']) delete postgres[table];
    for (const [table, column] of [['batches', 'taken_by'], ['rows', 'claimed_by'], ['rows', 'claimed_at'], ['webhook_events', 'claimed_by']] as const) {
      delete postgres[table]?.[column];
    }
    // SQLite added the column to batches already sent (released, 1); PostgreSQL made it with the table. Both stores
    // write it with every batch they begin (sqlite/intake.ts, postgres/intake.ts): the default is never used now.
    expect(sqlite.batches?.released?.default).toBe('1');
    expect(postgres.batches?.released?.default).toBe('0');
    (postgres.batches as Columns[string]).released = { notNull: true, default: '1' };
    expect(postgres).toEqual(sqlite);
  });
});
