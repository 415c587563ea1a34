/** What every part of the SQLite store shares: the connection, compiled statements, and one transaction wrapper. */
import type { Statement } from 'better-sqlite3';
import type { NewAuditEntry } from '../audit/chain.js';
import { GENESIS, chained } from '../audit/chain.js';
import type { SqliteDatabase } from './database.js';

export abstract class SqliteBase {
  private readonly statements = new Map<string, Statement>();
  /** One transaction wrapper, built once: better-sqlite3 builds new closures on every `db.transaction()`. */
  private readonly runAtomically: (work: () => unknown) => unknown;

  protected constructor(protected readonly db: SqliteDatabase) {
    // BEGIN IMMEDIATE: a transaction that reads, then writes, takes the write lock first. A
    // deferred one would fail at once with SQLITE_BUSY (no waiting) when another process (cancel
    // beside watch) wrote in between; immediate ones wait their turn under busy_timeout.
    this.runAtomically = db.transaction((work: () => unknown) => work()).immediate;
  }

  /** Each statement is compiled once: compiling is most of the cost of a small query. */
  protected sql(text: string): Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  protected atomic<T>(work: () => T): T {
    return this.runAtomically(work) as T;
  }

  /** Appends an entry to the audit trail, chained to the last one; call inside a transaction (atomic()). */
  protected appendAuditNow(entry: NewAuditEntry): void {
    const last = (this.sql('SELECT hash FROM audit_log ORDER BY seq DESC LIMIT 1').pluck().get() as string | undefined) ?? GENESIS;
    this.sql('INSERT INTO audit_log (at, actor, action, subject, details, prev_hash, hash) VALUES (@at, @actor, @action, @subject, @details, @prev_hash, @hash)')
      .run(chained(last, entry));
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

/** `?, ?, ?` for a list. */
export const marks = (values: readonly unknown[]): string => values.map(() => '?').join(', ');
