/**
 * The schema a fresh database is migrated to, on both stores, against a
 * snapshot taken before the migrations' shared steps were written once
 * (src/store/schema-changes.ts): a released migration's text may change, the
 * schema it makes never. A new migration changes the schema on purpose: run
 * `npx vitest run test/store/schema-snapshot.test.ts -u` and read the diff of
 * test/store/schema/ in review.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { freshDatabase, postgresAvailable } from '../helpers/postgres.js';
import { postgresSchema, sqliteSchema } from './schema-dump.js';

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
});
