/**
 * Which migrations a database still needs, decided once for both (STYLE 4):
 * each database's runner (sqlite/database.ts, postgres/migrate.ts) reads its
 * ledger, asks this, and applies each migration given in its own transaction.
 */
import { DatabaseUnusable } from '../errors.js';

export interface Migration {
  /** 1, 2, 3, ...: never renumbered; once released, never changed in what it makes. */
  version: number;
  name: string;
  sql: string;
  /**
   * Set when what this version stores an earlier release would misread: why. Workers of that release already
   * running on a shared database (PostgreSQL) never look at the schema's version again, so the migration is not
   * applied while one holds a live lease (postgres/migrate.ts). On SQLite the workspace's lease already keeps an
   * earlier run or watch from working beside this one.
   */
  earlierWorkersMustStop?: string;
}

/**
 * The migrations not applied yet, in order. Refused, changing nothing, when the
 * list skips a number, or when the ledger is at a version this paybatch does
 * not know (a newer paybatch wrote it).
 */
export function pendingMigrations(migrations: readonly Migration[], applied: ReadonlySet<number>): Migration[] {
  migrations.forEach(({ version }, index) => {
    if (version !== index + 1) throw new Error(`migrations must be numbered 1, 2, 3, ... without gaps; found ${version} at position ${index + 1}`);
  });
  const known = Math.max(0, ...applied);
  if (known > migrations.length) {
    throw new DatabaseUnusable(`the database is at schema version ${known}, newer than this paybatch knows (${migrations.length}): it was written by a newer paybatch; run that version (or newer), nothing was changed`);
  }
  return migrations.filter((migration) => !applied.has(migration.version));
}
