/** Applies the PostgreSQL migrations not applied yet, each in its own transaction, one worker at a time, with their ledger. */
import type pg from 'pg';
import { DatabaseUnusable } from '../../errors.js';
import type { PgMigration } from './migrations.js';
import { withConnection } from './connection.js';

const MIGRATION_LOCK = 7_281_920;

export async function migratePg(pool: pg.Pool, migrations: readonly PgMigration[]): Promise<number[]> {
  return withConnection(pool, async (client) => {
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      return await applyMigrations(client, migrations);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    }
  });
}

async function applyMigrations(client: pg.PoolClient, migrations: readonly PgMigration[]): Promise<number[]> {
  await client.query('CREATE TABLE IF NOT EXISTS pg_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set((await client.query('SELECT version FROM pg_schema_migrations')).rows.map((r: { version: number }) => r.version));
  const known = Math.max(0, ...applied);
  if (known > migrations.length) {
    throw new DatabaseUnusable(`the database is at schema version ${known}, newer than this paybatch knows (${migrations.length}): it was written by a newer paybatch; run that version (or newer), nothing was changed`);
  }
  const done: number[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    await client.query('BEGIN');
    try {
      await client.query(migration.sql);
      await client.query('INSERT INTO pg_schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [migration.version, migration.name, new Date().toISOString()]);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
    done.push(migration.version);
  }
  return done;
}
