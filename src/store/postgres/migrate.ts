/** Applies the PostgreSQL migrations not applied yet (migration-plan.ts), each in its own transaction, one worker at a time, with their ledger. */
import type pg from 'pg';
import type { Migration } from '../migration-plan.js';
import { pendingMigrations } from '../migration-plan.js';
import { DatabaseUnusable } from '../../errors.js';
import { withConnection } from './connection.js';

const MIGRATION_LOCK = 7_281_920;

/** `now`: the time a migration is recorded applied at, and a worker's lease is judged live against (as SQLite's migrate). */
export async function migratePg(pool: pg.Pool, migrations: readonly Migration[], now: () => Date = () => new Date()): Promise<number[]> {
  return withConnection(pool, async (client) => {
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      return await applyMigrations(client, migrations, now);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    }
  });
}

async function applyMigrations(client: pg.PoolClient, migrations: readonly Migration[], now: () => Date): Promise<number[]> {
  await client.query('CREATE TABLE IF NOT EXISTS pg_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set((await client.query('SELECT version FROM pg_schema_migrations')).rows.map((r: { version: number }) => r.version));
  const pending = pendingMigrations(migrations, applied);
  await refuseBesideEarlierWorkers(client, pending, now().getTime());
  for (const migration of pending) {
    await client.query('BEGIN');
    try {
      await client.query(migration.sql);
      await client.query('INSERT INTO pg_schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [migration.version, migration.name, now().toISOString()]);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  }
  return pending.map((migration) => migration.version);
}

/**
 * A migration whose data an earlier release would misread is not applied while a worker holds a live lease: every
 * worker holding one runs an earlier release (one of this release would have applied it before taking its lease), and
 * would go on working on rows it cannot read. Refused before anything is applied, naming the workers to stop.
 */
async function refuseBesideEarlierWorkers(client: pg.PoolClient, pending: readonly Migration[], nowMs: number): Promise<void> {
  const why = pending.find((migration) => migration.earlierWorkersMustStop)?.earlierWorkersMustStop;
  if (!why || (await client.query("SELECT to_regclass('workers') AS t")).rows[0]?.t === null) return;
  const live = (await client.query('SELECT name, host, pid FROM workers WHERE expires_at > $1 ORDER BY name', [nowMs])).rows as { name: string; host: string; pid: number }[];
  if (live.length === 0) return;
  const named = live.map((w) => `${w.name} (pid ${w.pid} on ${w.host})`).join(', ');
  throw new DatabaseUnusable(`${live.length === 1 ? 'a worker of an earlier paybatch is' : `${live.length} workers of an earlier paybatch are`} running on this database: ${named}; ${why}: stop every worker, then start this version (a worker killed without ending its lease counts until the lease runs out, store.worker_lease_ms); nothing was changed`);
}
