/**
 * The SQLite connection every query module of the SQLite store takes: the
 * database, its compiled statements, one transaction wrapper, and group commit.
 * It is the SqlConnection of queries/ too (statements both databases share).
 */
import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from './database.js';
import { Checkpointer } from './checkpointer.js';
import type { SqlConnection } from '../queries/connection.js';
import { SQLITE } from '../queries/connection.js';

type Outcome = { value: unknown } | { error: unknown };

/** What a group commit's transaction does last, once its work is done; and what it drops when rolled back. */
export interface GroupHooks {
  end(): void;
  undone(): void;
}

/** How the connection is tuned (store.* configuration). */
export interface ConnectionOptions {
  /** Group commits in one second that start the checkpoint thread (Checkpointer's default otherwise). */
  checkpointThreadGroupsPerSecond?: number;
}

export class SqliteConnection implements SqlConnection {
  readonly dialect = SQLITE;
  private readonly statements = new Map<string, Statement>();
  /** One transaction wrapper, built once: better-sqlite3 builds new closures on every `db.transaction()`. */
  private readonly runAtomically: (work: () => unknown) => unknown;
  private readonly checkpointer: Checkpointer | null;
  private readonly hooks: GroupHooks[] = [];

  constructor(readonly db: SqliteDatabase, options: ConnectionOptions = {}) {
    // BEGIN IMMEDIATE: a transaction that reads, then writes, takes the write lock first. A
    // deferred one would fail at once with SQLITE_BUSY (no waiting) when another process (cancel
    // beside watch) wrote in between; immediate ones wait their turn under busy_timeout.
    this.runAtomically = db.transaction((work: () => unknown) => work()).immediate;
    // A database in a file, written to (not a read-only view of one): its checkpoints may move off this thread under load.
    this.checkpointer = db.memory || db.readonly ? null : new Checkpointer(db, db.name, { busyGroupsPerSecond: options.checkpointThreadGroupsPerSecond });
  }

  /** Each statement is compiled once: compiling is most of the cost of a small query. */
  sql(text: string): Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  async all<T>(text: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.sql(text).all(...params) as T[];
  }

  async first<T>(text: string, params: readonly unknown[] = []): Promise<T | undefined> {
    return this.sql(text).get(...params) as T | undefined;
  }

  async run(text: string, params: readonly unknown[] = []): Promise<number> {
    return this.sql(text).run(...params).changes;
  }

  atomic<T>(work: () => T): T {
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
  atomicInGroup<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.grouped.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (this.grouped.length === 1) setImmediate(() => this.commitGroup());
    });
  }

  /** What a query module leaves to the end of each group commit (see sqlite/commit.ts's counts). */
  onGroup(hooks: GroupHooks): void {
    this.hooks.push(hooks);
  }

  /** The audit trail's last hash while a group commit's transaction runs, so that its entries are chained without reading it back each time. */
  groupAuditHead: string | undefined;
  /** Whether a group commit's transaction is running. */
  inGroup = false;

  private commitGroup(): void {
    const group = this.grouped;
    this.grouped = [];
    let outcomes: Outcome[];
    try {
      // Work almost never throws (a constraint, a bug): the group is tried first with no savepoint for each piece (two
      // statements a piece saved). If one throws, the whole transaction is rolled back and the group runs again, each
      // piece in a savepoint of its own, so that only the one that threw is undone.
      outcomes = this.inGroupTransaction(group, false) ?? (this.inGroupTransaction(group, true) as Outcome[]);
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
  private inGroupTransaction(group: { work: () => unknown }[], savepoints: boolean): Outcome[] | null {
    let pieceThrew = false;
    // In a savepoint, a piece that throws is undone alone and keeps its error; without one, it ends the transaction.
    const inSavepoint = (work: () => unknown): Outcome => {
      try {
        return { value: this.atomic(work) };
      } catch (error) {
        return { error };
      }
    };
    const bare = (work: () => unknown): Outcome => {
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
        for (const hook of this.hooks) hook.end();
        return each;
      });
    } catch (error) {
      // Rolled back: what the pieces left for the end of the group goes with it.
      for (const hook of this.hooks) hook.undone();
      if (pieceThrew) return null;
      throw error;
    } finally {
      this.inGroup = false;
      this.groupAuditHead = undefined;
    }
  }

  async close(): Promise<void> {
    await this.checkpointer?.close();
    this.db.close();
  }
}
