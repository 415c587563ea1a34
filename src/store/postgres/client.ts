/**
 * The PostgreSQL connection every query module of the PostgreSQL store takes:
 * the pool (node-postgres), or one of its connections inside a transaction.
 * Statements are written with `?` placeholders (queries/connection.ts), numbered
 * here, and sent as statements prepared once per connection where that is
 * safe (prepared.ts; store.prepared_statements); a lost connection fails the
 * call as DatabaseUnreachable (connection.ts).
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { SqlConnection } from '../queries/connection.js';
import { POSTGRES } from '../queries/connection.js';
import { asUnreachable, withConnection } from './connection.js';
import { statementOf } from './prepared.js';

// BIGINT columns hold ms since the epoch, counts and ids: all within 2^53, read as numbers. COUNT(*) is a BIGINT too.
pg.types.setTypeParser(20, (value: string) => Number(value));

export type Queryable = pg.Pool | pg.PoolClient;

export class PgConnection implements SqlConnection {
  readonly dialect = POSTGRES;

  /**
   * On the pool (`pool` given: transactions may begin), or on one connection of it inside a transaction. `prepare`:
   * statements are named, so that each connection prepares them once (prepared.ts).
   */
  constructor(private readonly on: Queryable, private readonly pool: pg.Pool | null = null, private readonly prepare = true) {}

  async all<T>(text: string, params: readonly unknown[] = []): Promise<T[]> {
    return (await this.query(text, params)).rows as T[];
  }

  async first<T>(text: string, params: readonly unknown[] = []): Promise<T | undefined> {
    return (await this.all<T>(text, params))[0];
  }

  async run(text: string, params: readonly unknown[] = []): Promise<number> {
    return (await this.query(text, params)).rowCount ?? 0;
  }

  /** A lost connection fails the call as DatabaseUnreachable (see connection.ts), whatever ran it. */
  private async query(text: string, params: readonly unknown[]): Promise<pg.QueryResult> {
    try {
      const statement = statementOf(text, this.prepare);
      if (statement.name === null) return await this.on.query(statement.text, params as unknown[]);
      return await this.on.query({ name: statement.name, text: statement.text, values: params as unknown[] });
    } catch (error) {
      throw asUnreachable(error);
    }
  }

  /** Runs `work` in one transaction on one connection; rolled back if it throws. */
  async tx<T>(work: (c: PgConnection) => Promise<T>): Promise<T> {
    if (!this.pool) throw new Error('a transaction begins on the pool, not inside another');
    return withConnection(this.pool, async (client) => {
      try {
        await client.query('BEGIN');
        const result = await work(new PgConnection(client, null, this.prepare));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // On a connection that was lost this fails at once; the server rolls back what it held.
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      }
    });
  }

  /**
   * Runs `COPY ... FROM STDIN` (`text`, no parameters) inside a transaction, sending `data` (in COPY's format, see
   * copy-text.ts) as it is; the rows it stored. A row the server refuses fails the whole COPY: none of it is stored.
   */
  async copyIn(text: string, data: string): Promise<number> {
    if (this.pool) throw new Error('a COPY runs inside a transaction, on its one connection');
    const copy = (this.on as pg.PoolClient).query(copyFrom(text));
    try {
      // Resolved once the server has said it took every row (pg-copy-streams finishes on its ReadyForQuery).
      await pipeline(Readable.from([Buffer.from(data, 'utf8')]), copy);
    } catch (error) {
      throw asUnreachable(error);
    }
    return copy.rowCount;
  }

  /** Takes an advisory lock for the rest of the transaction (one writer at a time across workers). */
  async lockForTransaction(key: number): Promise<void> {
    await this.run('SELECT pg_advisory_xact_lock(?)', [key]);
  }

  async close(): Promise<void> {
    await this.pool?.end();
  }
}
