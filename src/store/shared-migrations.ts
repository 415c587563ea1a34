/**
 * The migrations both databases make, each a step of schema-changes.ts, with
 * the version each database gives it: SQLite's and PostgreSQL's numbers differ
 * (PostgreSQL's first migration made SQLite's first eight at once, and each has
 * migrations of its own), so the pairing is written here, once. Each
 * database's list (sqlite/migrations.ts, postgres/migrations.ts) is its own
 * migrations and these, in order of its versions; migration-plan.ts refuses a
 * list with a gap or a version twice.
 */
import type { Migration } from './migration-plan.js';
import type { Dialect, SchemaChange } from './schema-changes.js';
import * as change from './schema-changes.js';

interface SharedMigration {
  sqlite: number;
  postgres: number;
  name: string;
  change: SchemaChange;
  /** See Migration.earlierWorkersMustStop. */
  earlierWorkersMustStop?: string;
}

const SHARED_MIGRATIONS: readonly SharedMigration[] = [
  { sqlite: 9, postgres: 3, name: 'console sign-ins and the notification outbox', change: change.consoleSignInsAndOutbox },
  { sqlite: 10, postgres: 4, name: 'corrections and results an accountant can read', change: change.correctionsAndResults },
  { sqlite: 11, postgres: 5, name: 'the corridors each batch uses', change: change.batchCorridors },
  { sqlite: 12, postgres: 6, name: 'rows followed with no read scheduled', change: change.rowsUnscheduled },
  { sqlite: 14, postgres: 8, name: 'audit entries with a version, and approvals and rejections found by batch', change: change.auditVersionsAndDecisions },
  { sqlite: 15, postgres: 9, name: 'the deployment approvals are for, and the sealed release of a batch', change: change.deploymentAndSealedRelease },
  { sqlite: 16, postgres: 10, name: 'recipient accounts of rows, and possible duplicate payments', change: change.recipientsAndDuplicates },
  { sqlite: 17, postgres: 12, name: 'the service\'s may_cancel per row, and one-time fills of data older than its column', change: change.mayCancelAndBackfills },
  { sqlite: 18, postgres: 13, name: 'audit pages by keyset: entries by batch and by action, and the verification kept', change: change.auditPages },
  { sqlite: 19, postgres: 14, name: 'the cancellations sent for a row, and when the last one went', change: change.cancelsSent },
  { sqlite: 20, postgres: 15, name: 'a cancellation the service accepted, and the sends of rows cancelling before they were counted', change: change.cancelAccepted },
  {
    sqlite: 21, postgres: 16, name: 'requests kept compact: an older paybatch refuses the database rather than misread them', change: change.compactRequests,
    earlierWorkersMustStop: 'from this version requests are stored in a form earlier releases would misread',
  },
  {
    sqlite: 22, postgres: 17, name: 'recipient entries by payment in a table written in order, not an index written row by row', change: change.recipientPayments,
    earlierWorkersMustStop: 'from this version the possible-duplicate check looks for twins where earlier releases write none',
  },
];

/** A database's migrations: its own and the shared ones, in order of version. PostgreSQL's ledger names the SQLite migration each shared one is. */
export function withSharedMigrations(dialect: Dialect, own: readonly Migration[]): readonly Migration[] {
  const shared = SHARED_MIGRATIONS.map((m) => ({
    version: m[dialect],
    name: dialect === 'sqlite' ? m.name : `${m.name} (as SQLite migration ${m.sqlite})`,
    sql: m.change(dialect),
    earlierWorkersMustStop: m.earlierWorkersMustStop,
  }));
  return [...own, ...shared].sort((a, b) => a.version - b.version);
}
