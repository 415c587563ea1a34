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
    try {
      return this.runAtomically(work) as T;
    } catch (error) {
      // Undone, with any audit entries it made: within a group, the trail's head is read again for the next entry.
      this.groupAuditHead = undefined;
      throw error;
    }
  }

  /** Work waiting for the next group commit, in the order it was asked for. */
  private grouped: { work: () => unknown; resolve(value: unknown): void; reject(error: unknown): void }[] = [];

  /**
   * Runs `work` atomically in the next group commit: every piece of work asked
   * for in the same turn of the event loop goes into one transaction. One that
   * throws is undone alone and rejects its own promise; the others are applied.
   * The promise resolves only once the whole transaction is committed, so a
   * caller that records an intent before a call still calls only after the
   * intent is on disk. One commit for many rows: each commit writes the pages it
   * touched to the write-ahead log, and rows in flight together mostly share
   * their pages.
   */
  protected atomicInGroup<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.grouped.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (this.grouped.length === 1) setImmediate(() => this.commitGroup());
    });
  }

  /** The audit trail's last hash while a group commit's transaction runs, so that its entries are chained without reading it back each time. */
  private groupAuditHead: string | undefined;
  private inGroup = false;

  private commitGroup(): void {
    const group = this.grouped;
    this.grouped = [];
    let outcomes: ({ value: unknown } | { error: unknown })[];
    try {
      // Work almost never throws (a constraint, a bug): the group is tried first with no savepoint for each piece (two
      // statements a piece saved). If one throws, the whole transaction is rolled back and the group runs again, each
      // piece in a savepoint of its own, so that only the one that threw is undone.
      outcomes = this.inGroupTransaction(group, false) ?? (this.inGroupTransaction(group, true) as typeof outcomes);
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

  /** The group in one transaction; without savepoints, null (nothing of it applied) when a piece threw. */
  private inGroupTransaction(group: { work: () => unknown }[], savepoints: boolean): ({ value: unknown } | { error: unknown })[] | null {
    let pieceThrew = false;
    // In a savepoint, a piece that throws is undone alone and keeps its error; without one, it ends the transaction.
    const inSavepoint = (work: () => unknown): { value: unknown } | { error: unknown } => {
      try {
        return { value: this.atomic(work) };
      } catch (error) {
        return { error };
      }
    };
    const bare = (work: () => unknown): { value: unknown } => {
      try {
        return { value: work() };
      } catch (error) {
        pieceThrew = true;
        throw error;
      }
    };
    this.inGroup = true;
    try {
      return this.atomic(() => {
        const each = group.map(({ work }) => (savepoints ? inSavepoint(work) : bare(work)));
        this.endGroup();
        return each;
      });
    } catch (error) {
      // Rolled back: what the pieces left for the end of the group goes with it.
      this.groupUndone();
      if (pieceThrew) return null;
      throw error;
    } finally {
      this.inGroup = false;
      this.groupAuditHead = undefined;
    }
  }

  /**
   * Last in each group commit's transaction, once its work is done: what the
   * work left to apply once for the whole group (see SqlitePipeline's counts).
   */
  protected endGroup(): void {}

  /** A group commit's transaction was rolled back: what its work left for endGroup is dropped. */
  protected groupUndone(): void {}

  /** Appends an entry to the audit trail, chained to the last one; call inside a transaction (atomic()). */
  protected appendAuditNow(entry: NewAuditEntry): void {
    // In a group commit the head is known after the first entry: the transaction holds the write lock, nothing else appends.
    // Outside a group it is always undefined (dropped as each group's transaction ends), so the trail is read.
    const last = this.groupAuditHead
      ?? (this.sql('SELECT hash FROM audit_log ORDER BY seq DESC LIMIT 1').pluck().get() as string | undefined) ?? GENESIS;
    const stored = chained(last, entry);
    this.sql('INSERT INTO audit_log (version, at, actor, action, subject, details, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(stored.version, stored.at, stored.actor, stored.action, stored.subject, stored.details, stored.prev_hash, stored.hash);
    if (this.inGroup) this.groupAuditHead = stored.hash;
  }

  async close(): Promise<void> {
    await this.checkpointer?.close();
    this.db.close();
  }
}

/** `?, ?, ?` for a list. */
export const marks = (values: readonly unknown[]): string => values.map(() => '?').join(', ');
