/**
 * The SQLite store: every port of port.ts on better-sqlite3 (synchronous, so
 * each method is atomic), composed of query modules that take the connection:
 * the part both databases share (queries/shared-store.ts) and SQLite's own
 * transactions (this folder, bound by queries/dialect-bindings.ts where
 * PostgreSQL's have the same names). It holds no query and no rule of its own,
 * and extends nothing.
 */
import { DatabaseUnusable } from '../../errors.js';
import type { Store } from '../port.js';
import { dialectBindings } from '../queries/dialect-bindings.js';
import { sharedStore } from '../queries/shared-store.js';
import { appendAudit, appendAuditNow } from './audit.js';
import { checkAuditRanges } from './audit-ranges.js';
import * as duplicates from './duplicates.js';
import { LearnedChanges, commitRow } from './commit.js';
import { SqliteConnection } from './connection.js';
import type { ConnectionOptions } from './connection.js';
import { acquireLease } from './coordination.js';
import type { SqliteDatabase } from './database.js';
import { damagedMessage, isDamage, migrate, openDatabase } from './database.js';
import * as intake from './intake.js';
import { MIGRATIONS } from './migrations.js';
import { claimDueNotifications } from './outbox.js';
import * as pipeline from './pipeline.js';
import { backfillPaymentsSqlite, backfillRecipientsSqlite } from './recipient-backfill.js';

export interface SqliteStore extends Store {
  readonly db: SqliteDatabase;
  /** The connection its queries take (its statements, transactions and group commit). */
  readonly connection: SqliteConnection;
  /** An online copy (SQLite's backup API), consistent even while another process writes. */
  backup(to: string): Promise<void>;
}

export const SqliteStore = {
  /** Opens (and migrates, and fills what older versions did not store) the database. `run` and `watch` have it checked whole beside their work (background-check.ts). */
  open(file: string, options: ConnectionOptions = {}): SqliteStore {
    let db: SqliteDatabase | undefined;
    try {
      db = openDatabase(file);
      migrate(db, MIGRATIONS);
      backfillRecipientsSqlite(db);
      backfillPaymentsSqlite(db);
    } catch (error) {
      db?.close();
      if (isDamage(error)) throw new DatabaseUnusable(damagedMessage(file, [(error as Error).message]));
      throw error;
    }
    return sqliteStore(db, options);
  },
};

function sqliteStore(db: SqliteDatabase, options: ConnectionOptions): SqliteStore {
  const c = new SqliteConnection(db, options);
  const learned = new LearnedChanges(c);
  return {
    ...sharedStore(c),
    db,
    connection: c,
    backup: async (to) => {
      await db.backup(to);
    },
    close: () => c.close(),
    ...dialectBindings(c, { ...intake, ...pipeline, acquireLease, appendAudit, claimDueNotifications }),
    // On threads with connections of their own to the file: a database in memory has none to share.
    ...(db.memory ? {} : { checkAuditRanges: (throughSeq: number) => checkAuditRanges(db.name, throughSeq) }),
    // SQLite makes rows ready as they are added: a suspended intake gives them back (PostgreSQL has none to give).
    suspendIntake: (batchId) => intake.suspendIntake(c, batchId),
    rowsStored: async () => {},
    // The caller's copy of the row (seen) spares reading it again; changes learned are counted a group commit at a time (commit.ts).
    commitRow: (batchId, line, revision, patch, seen) => commitRow(c, learned, batchId, line, revision, patch, seen),
    // possible duplicates (engine/duplicates.ts decides)
    recordPossibleDuplicates: async (found) => c.atomic(() => duplicates.recordPossibleDuplicatesSqlite(c, found)),
    indexRecipients: (batchId) => duplicates.indexRecipientsSqlite(c, batchId),
    allowDuplicate: async (batchId, line, allowance) => c.atomic(() => duplicates.allowDuplicateSqlite(c, batchId, line, allowance, (entry) => appendAuditNow(c, entry))),
  };
}
