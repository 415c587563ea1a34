/**
 * What every part of the SQLite store shares: the connection, compiled
 * statements, one transaction wrapper, and group commit.
 */
import type { Statement } from 'better-sqlite3';
import type { NewAuditEntry } from '../audit/chain.js';
import { GENESIS, chained } from '../audit/chain.js';
import type { SqliteDatabase } from './database.js';
import { Checkpointer } from './checkpointer.js';

export abstract class SqliteBase {
  private readonly statements = new Map<string, Statement>();
  /** One transaction wrapper, built once: better-sqlite3 builds new closures on every `db.transaction()`. */
  private readonly runAtomically: (work: () => unknown) => unknown;

  protected constructor(protected readonly db: SqliteDatabase) {
    // BEGIN IMMEDIATE: a transaction that reads, then writes, takes the write lock first. A
    // deferred one would fail at once with SQLITE_BUSY (no waiting) when another process (cancel
    // beside watch) wrote in between; immediate ones wait their turn under busy_timeout.
    this.runAtomically = db.transaction((work: () => unknown) => work()).immediate;
    // A database in a file, written to (not a read-only view of one): its checkpoints may move off this thread under load.
    this.checkpointer = db.memory || db.readonly ? null : new Checkpointer(db, db.name);
  }

  private readonly checkpointer: Checkpointer | null;

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

  /** Work waiting for the next group commit, in the order it was asked for. */
  private grouped: { work: () => unknown; resolve(value: unknown): void; reject(error: unknown): void }[] = [];

  /**
   * Runs `work` atomically in the next group commit: every piece of work asked
   * for in the same turn of the event loop goes into one transaction, each in a
   * savepoint of its own (one that throws is undone alone and rejects its own
   * promise). The promise resolves only once the whole transaction is
   * committed, so a caller that records an intent before a call still calls
   * only after the intent is on disk. One commit for many rows: each commit
   * writes the pages it touched to the write-ahead log, and rows in flight
   * together mostly share their pages.
   */
  protected atomicInGroup<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.grouped.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (this.grouped.length === 1) setImmediate(() => this.commitGroup());
    });
  }

  private commitGroup(): void {
    const group = this.grouped;
    this.grouped = [];
    let outcomes: ({ value: unknown } | { error: unknown })[];
    try {
      outcomes = this.atomic(() => {
        const each = group.map(({ work }) => {
          try {
            return { value: this.atomic(work) };
          } catch (error) {
            return { error };
          }
        });
        this.endGroup();
        return each;
      });
    } catch (error) {
      // The transaction itself failed (the disk, a lock held too long): nothing of the group was applied.
      for (const { reject } of group) reject(error);
      return;
    }
    this.checkpointer?.groupCommitted();
    outcomes.forEach((outcome, index) => {
      const { resolve, reject } = group[index] as (typeof group)[number];
      if ('error' in outcome) reject(outcome.error);
      else resolve(outcome.value);
    });
  }

  /**
   * Last in each group commit's transaction, once its work is done: what the
   * work left to apply once for the whole group (see SqlitePipeline's counts).
   */
  protected endGroup(): void {}

  /** Appends an entry to the audit trail, chained to the last one; call inside a transaction (atomic()). */
  protected appendAuditNow(entry: NewAuditEntry): void {
    const last = (this.sql('SELECT hash FROM audit_log ORDER BY seq DESC LIMIT 1').pluck().get() as string | undefined) ?? GENESIS;
    this.sql('INSERT INTO audit_log (at, actor, action, subject, details, prev_hash, hash) VALUES (@at, @actor, @action, @subject, @details, @prev_hash, @hash)')
      .run(chained(last, entry));
  }

  async close(): Promise<void> {
    await this.checkpointer?.close();
    this.db.close();
  }
}

/** `?, ?, ?` for a list. */
export const marks = (values: readonly unknown[]): string => values.map(() => '?').join(', ');
