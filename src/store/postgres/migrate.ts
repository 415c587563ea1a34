/** Applies the PostgreSQL migrations not applied yet (migration-plan.ts), each in its own transaction, one worker at a time, with their ledger. */
import type pg from 'pg';
import type { Migration } from '../migration-plan.js';
import { pendingMigrations } from '../migration-plan.js';
import { withConnection } from './connection.js';

const MIGRATION_LOCK = 7_281_920;

export async function migratePg(pool: pg.Pool, migrations: readonly Migration[]): Promise<number[]> {
  return withConnection(pool, async (client) => {
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      return await applyMigrations(client, migrations);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    }
  });
}

async function applyMigrations(client: pg.PoolClient, migrations: readonly Migration[]): Promise<number[]> {
  await client.query('CREATE TABLE IF NOT EXISTS pg_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set((await client.query('SELECT version FROM pg_schema_migrations')).rows.map((r: { version: number }) => r.version));
  const pending = pendingMigrations(migrations, applied);
  for (const migration of pending) {
    await client.query('BEGIN');
    try {
      await client.query(migration.sql);
      await client.query('INSERT INTO pg_schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [migration.version, migration.name, new Date().toISOString()]);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  }
  return pending.map((migration) => migration.version);
}
