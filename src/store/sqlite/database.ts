/**
 * Opening paybatch's SQLite database: WAL with synchronous NORMAL, foreign keys,
 * a busy timeout, and files readable by their owner only (they hold account
 * numbers).
 *
 * Why NORMAL and not FULL: in WAL mode NORMAL keeps every commit through a crash
 * of the process (kill -9 included) and skips an fsync per commit, which made
 * each row's six steps cost milliseconds. Only an OS crash or power cut can lose
 * the last commits, and even then nothing is paid twice: a create repeated after
 * a lost intent is refused by the service's unique external_id [D6] and the
 * pipeline adopts the existing transaction; a repeated funding is refused [D10]
 * and the pipeline reads the transaction instead.
 * Numbered, append-only migrations are applied at start, each in its own
 * transaction, and recorded in a ledger (STYLE 4).
 */
import { chmodSync, closeSync, constants, existsSync, lstatSync, openSync } from 'node:fs';
import { UnsafePath } from '../../workspace/safe-files.js';
import Database from 'better-sqlite3';
import type { Migration } from '../migration-plan.js';
import { pendingMigrations } from '../migration-plan.js';


export type SqliteDatabase = Database.Database;

/** Bytes the write-ahead log is truncated to after a checkpoint. */
const WAL_SIZE_LIMIT = 16 * 1024 * 1024;

/** Restricts the database and its WAL and shared-memory files to the owner. */
function restrict(file: string): void {
  for (const path of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(path)) chmodSync(path, 0o600);
}

/** The database and its WAL and shared-memory files are never opened through a link. */
function refuseLinks(file: string): void {
  for (const path of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) {
    if (lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink()) {
      throw new UnsafePath(`${path} is a symbolic link: refused, paybatch opens its database through no link`);
    }
  }
}

/** What to do with a damaged database, said with every refusal to use one. */
export const RESTORE_HINT = 'stop paybatch, move paybatch.db (and paybatch.db-wal, paybatch.db-shm) aside, and restore the last backup made with `paybatch backup` (docs/operations.md, "Backup and restore")';

/** SQLite's ways of saying a file is not a sound database. */
const DAMAGED: ReadonlySet<string> = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB', 'SQLITE_CORRUPT_VTAB', 'SQLITE_IOERR_SHORT_READ']);

export function isDamage(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && DAMAGED.has(code);
}

/**
 * What SQLite's quick check finds wrong with the database (empty when it is
 * sound): every page is read, about a second for a million rows. `run` and
 * `watch` have it done beside their work (background-check.ts).
 */
export function quickCheckProblems(db: SqliteDatabase): string[] {
  try {
    return (db.prepare('PRAGMA quick_check(5)').pluck().all() as string[]).filter((line) => line !== 'ok');
  } catch (error) {
    if (!isDamage(error)) throw error;
    return [(error as Error).message];
  }
}

/**
 * The quick check of a database file on a connection of its own, reading only
 * (a snapshot while another connection writes), with SQLite's default 2 MB
 * page cache as the main connection's: every page passes through it once.
 */
export function quickCheckFile(file: string): string[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    db.pragma('cache_size = -2000');
    return quickCheckProblems(db);
  } finally {
    db.close();
  }
}

/** A damaged database, said with what to do. */
export function damagedMessage(file: string, problems: readonly string[]): string {
  return `the database ${file} is damaged (${problems.join('; ')}): ${RESTORE_HINT}`;
}

/**
 * Opens the database file. Where SQLite keeps its own temporary files is
 * process-wide and set by the CLI before it opens one (cli/process-tuning.ts),
 * not here.
 */
export function openDatabase(file: string): SqliteDatabase {
  refuseLinks(file);
  if (!existsSync(file)) closeSync(openSync(file, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600));
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // SQLite's own default page cache (2 MB; better-sqlite3 builds with 16 MB). The operating system caches the file
  // too: on a million-row intake the larger cache took 15 MB more memory and no less time (25.4 to 26.1 s either way).
  db.pragma('cache_size = -2000');
  // After a checkpoint the write-ahead log is cut back to this size: it never keeps the size of its busiest moment.
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  restrict(file);
  return db;
}

/** Applies the migrations not applied yet (migration-plan.ts), each in its own transaction; returns the versions applied now. */
export function migrate(db: SqliteDatabase, migrations: readonly Migration[], now: () => Date = () => new Date()): number[] {
  const applied = new Set((db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[]));
  const pending = pendingMigrations(migrations, applied);
  for (const migration of pending) {
    db.transaction(() => {
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(migration.version, migration.name, now().toISOString());
    })();
  }
  return pending.map((migration) => migration.version);
}
