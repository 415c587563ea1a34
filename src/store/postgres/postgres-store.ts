/**
 * The PostgreSQL store: every port of port.ts, to the same contract as
 * SQLite's (test/store/contract.ts), for several workers sharing one database;
 * composed of query modules that take the connection: the part both databases
 * share (queries/shared-store.ts) and PostgreSQL's own (this folder, bound by
 * queries/dialect-bindings.ts where SQLite's have the same names). It holds no
 * query and no rule of its own, and extends nothing.
 */
import pg from 'pg';
import { DatabaseUnreachable, DatabaseUnusable } from '../../errors.js';
import { redactUrl } from '../database-url.js';
import type { SharedWorkStore, Store } from '../port.js';
import { sharedTokens } from '../queries/rate-buckets.js';
import { dialectBindings } from '../queries/dialect-bindings.js';
import { sharedStore } from '../queries/shared-store.js';
import { appendAudit, appendAuditIn } from './audit.js';
import * as duplicates from './duplicates.js';
import { PgConnection } from './client.js';
import { commitRow } from './commit.js';
import { connectionLost, lostDetail } from './connection.js';
import { acquireLease } from './coordination.js';
import * as intake from './intake.js';
import { readsWithLearned } from './learned.js';
import { migratePg } from './migrate.js';
import { PG_MIGRATIONS } from './migrations.js';
import { claimDueNotifications } from './outbox.js';
import * as pipeline from './pipeline.js';
import { backfillPaymentsPg, backfillRecipientsPg } from './recipient-backfill.js';
import * as shared from './shared-work.js';

export type PostgresStore = Store & SharedWorkStore;

/** How the store's pool connects, and the settings each of its sessions starts with. */
export function poolConfig(url: string, max: number): pg.PoolConfig {
  return {
    connectionString: url, max, connectionTimeoutMillis: 10_000,
    // Bounded waits: a statement, a lock or a transaction left open by a stalled worker never holds the others for long.
    statement_timeout: 120_000, lock_timeout: 30_000, idle_in_transaction_session_timeout: 60_000,
    // A prepared statement planned for its values on every call, never a generic plan (prepared.ts).
    options: '-c plan_cache_mode=force_custom_plan',
  };
}

export const PostgresStore = {
  /**
   * Connects (a pool of `max` connections) and applies the migrations not applied yet, and fills what older versions did
   * not store. `preparedStatements` (default true): statements prepared once per connection (prepared.ts).
   */
  async open(url: string, options: { max?: number; preparedStatements?: boolean } = {}): Promise<PostgresStore> {
    const pool = new pg.Pool(poolConfig(url, options.max ?? 10));
    // An idle connection that fails (the server restarted) must not bring the process down: the next query reconnects.
    // One taken from the pool is listened to while it is out (connection.ts).
    pool.on('error', () => {});
    try {
      await migratePg(pool, PG_MIGRATIONS);
      await backfillRecipientsPg(new PgConnection(pool, pool));
      await backfillPaymentsPg(new PgConnection(pool, pool));
    } catch (error) {
      await pool.end().catch(() => {});
      if (error instanceof DatabaseUnusable) throw error;
      // Down or out of reach is not a database this paybatch cannot use: run again once it answers (exit 75).
      if (connectionLost(error)) {
        throw new DatabaseUnreachable(`PostgreSQL at ${redactUrl(url)} cannot be reached (${lostDetail(error)}): nothing was changed; run again once it answers`, { cause: error });
      }
      throw new DatabaseUnusable(`PostgreSQL at ${redactUrl(url)} cannot be used: ${(error as Error).message}`);
    }
    return postgresStore(pool, options.preparedStatements ?? true);
  },
};

function postgresStore(pool: pg.Pool, prepare: boolean): PostgresStore {
  const c = new PgConnection(pool, pool, prepare);
  const slotsMade: shared.CallSlotsMade = { slots: 0 };
  const rateTokens = sharedTokens(c);
  const common = sharedStore(c);
  return {
    ...common,
    // Each batch read with the state changes every connection counted (learned.ts).
    ...readsWithLearned(c, common),
    close: () => c.close(),
    ...dialectBindings(c, { ...intake, ...pipeline, acquireLease, appendAudit, claimDueNotifications }),
    // Rows are made ready only by the acceptance, in the transaction that ends the intake: none to give back.
    suspendIntake: async () => {},
    rowsStored: (batchId, count) => intake.rowsStored(c, batchId, count),
    // The row is locked and read again in the commit: a caller's copy of it is not needed.
    commitRow: (batchId, line, revision, patch) => commitRow(c, batchId, line, revision, patch),
    // possible duplicates (engine/duplicates.ts decides)
    recordPossibleDuplicates: (found) => c.tx((tx) => duplicates.recordPossibleDuplicatesPg(tx, found)),
    indexRecipients: (batchId) => duplicates.indexRecipientsPg(c, batchId),
    allowDuplicate: (batchId, line, allowance) => c.tx((tx) => duplicates.allowDuplicatePg(tx, batchId, line, allowance, (entry) => appendAuditIn(tx, entry))),
    // work shared between workers
    joinWorkers: (me, isAlive) => shared.joinWorkers(c, me, isAlive),
    renewWorker: (name, token, at, expiresAt) => shared.renewWorker(c, name, token, at, expiresAt),
    leaveWorkers: (name, token) => shared.leaveWorkers(c, name, token),
    workers: () => shared.workers(c),
    claimRow: (batchId, line, worker, now) => shared.claimRow(c, batchId, line, worker, now),
    releaseRow: (batchId, line, worker) => shared.releaseRow(c, batchId, line, worker),
    claimReadyRows: (batchId, worker, now, limit) => shared.claimReadyRows(c, batchId, worker, now, limit),
    claimDueReads: (worker, now, limit) => shared.claimDueReads(c, worker, now, limit),
    claimWebhookEvents: (worker, now, limit) => shared.claimWebhookEvents(c, worker, now, limit),
    takeCallSlot: (worker, slots, now) => shared.takeCallSlot(c, slotsMade, worker, slots, now),
    returnCallSlot: (slot, worker, takenAt) => shared.returnCallSlot(c, slot, worker, takenAt),
    reserveRateTokens: (buckets, now) => rateTokens(buckets, now),
    sweepOwnClaims: (worker, before, working, slots) => shared.sweepOwnClaims(c, worker, before, working, slots),
    heldBy: (worker) => shared.heldBy(c, worker),
    addFileChunk: (batchId, seq, bytes) => shared.addFileChunk(c, batchId, seq, bytes),
    fileChunks: (batchId) => shared.fileChunks(c, batchId),
    keepManifest: (batchId, text) => shared.keepManifest(c, batchId, text),
    keptManifest: (batchId) => shared.keptManifest(c, batchId),
    orphanedIntakes: (worker, now, ownToo) => shared.orphanedIntakes(c, worker, now, ownToo),
  };
}
