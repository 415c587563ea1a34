/**
 * What every part of the PostgreSQL store shares: the pool (node-postgres),
 * queries, transactions, the audit trail's append (serialised by an advisory
 * lock, since several workers append), and the migrations with their ledger.
 */
import pg from 'pg';
import type { NewAuditEntry } from '../../audit/chain.js';
import { GENESIS, chained } from '../../audit/chain.js';
import { DatabaseUnusable } from '../../errors.js';
import type { PgMigration } from './migrations.js';
import { asUnreachable, withConnection } from './connection.js';

// BIGINT columns hold ms since the epoch, counts and ids: all within 2^53, read as numbers.
pg.types.setTypeParser(20, (value: string) => Number(value));

/** One key for the audit chain's lock: appends are serialised across workers. */
const AUDIT_LOCK = 7_281_919;
const MIGRATION_LOCK = 7_281_920;

export type Queryable = pg.Pool | pg.PoolClient;

export abstract class PgBase {
  protected constructor(protected readonly pool: pg.Pool) {}

  protected async all<T>(sql: string, params: readonly unknown[] = [], on: Queryable = this.pool): Promise<T[]> {
    return (await this.query(sql, params, on)).rows as T[];
  }

  protected async first<T>(sql: string, params: readonly unknown[] = [], on: Queryable = this.pool): Promise<T | undefined> {
    return (await this.all<T>(sql, params, on))[0];
  }

  protected async run(sql: string, params: readonly unknown[] = [], on: Queryable = this.pool): Promise<number> {
    return (await this.query(sql, params, on)).rowCount ?? 0;
  }

  /** A lost connection fails the call as DatabaseUnreachable (see connection.ts), whatever ran it. */
  private async query(sql: string, params: readonly unknown[], on: Queryable): Promise<pg.QueryResult> {
    try {
      return await on.query(sql, params as unknown[]);
    } catch (error) {
      throw asUnreachable(error);
    }
  }

  /** Runs `work` in one transaction on one connection; rolled back if it throws. */
  protected async tx<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return withConnection(this.pool, async (client) => {
      try {
        await client.query('BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // On a connection that was lost this fails at once; the server rolls back what it held.
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      }
    });
  }

  /** Appends to the audit trail inside the caller's transaction, chained to the last entry. */
  protected async appendAuditIn(client: pg.PoolClient, entry: NewAuditEntry): Promise<void> {
    await client.query('SELECT pg_advisory_xact_lock($1)', [AUDIT_LOCK]);
    const last = (await this.first<{ hash: string }>('SELECT hash FROM audit_log ORDER BY seq DESC LIMIT 1', [], client))?.hash ?? GENESIS;
    const row = chained(last, entry);
    await client.query('INSERT INTO audit_log (version, at, actor, action, subject, details, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [row.version, row.at, row.actor, row.action, row.subject, row.details, row.prev_hash, row.hash]);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** Applies the migrations not applied yet, each in its own transaction, one worker at a time. */
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
