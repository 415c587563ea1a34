/**
 * A worker thread that copies the write-ahead log back into the database
 * (SQLite's checkpoint) on a connection of its own, while the main thread
 * writes (see checkpointer.ts). A PASSIVE checkpoint never waits for the writer
 * and never holds it up; one with nothing new to copy costs almost nothing.
 * Stops when told, between two checkpoints, and closes its connection: a
 * thread terminated from outside while SQLite works can take the process down.
 * Whatever stops it otherwise is told to the main thread, which then
 * checkpoints itself again.
 */
import { fstatSync, readSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import { heapGiven, holdHeapFlags } from '../../heap.js';
import type { FileIdentity } from './checkpointer.js';
import { identityOf, sameFile } from './checkpointer.js';

// First: this worker's start put the heap's flags back for the whole process (see heap.ts); then SQLite is loaded.
// Loaded by require, not by a top-level await of import(): a module that awaits at its top is evaluated
// asynchronously, and process.exit() on the main thread while that evaluation was under way aborted the process
// (SIGTRAP, V8's "Check failed: (location_) != nullptr", as in nodejs/node#43182), once under test:busy.
holdHeapFlags(heapGiven(workerData));
const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;

const { file, everyMs, opened } = workerData as { file: string; everyMs: number; opened: FileIdentity };

function failed(why: string): void {
  parentPort?.postMessage({ failed: why });
  parentPort?.close();
}

/** The descriptors of regular files this process has open, by file (device:inode; Linux); null where that cannot be read. */
function openFiles(): Map<string, number> | null {
  let fds: string[];
  try {
    fds = readdirSync('/proc/self/fd');
  } catch {
    return null;
  }
  const files = new Map<string, number>();
  for (const fd of fds) {
    try {
      const stat = fstatSync(Number(fd));
      if (stat.isFile()) files.set(`${stat.dev}:${stat.ino}`, Number(fd));
    } catch {
      // Closed meanwhile (the listing's own, another thread's).
    }
  }
  return files;
}

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** Whether the file open at `fd` is an SQLite database (read where it is, its offset left alone); false when it cannot be read. */
function isDatabase(fd: number): boolean {
  const header = Buffer.alloc(SQLITE_HEADER.length);
  try {
    return readSync(fd, header, 0, header.length, 0) === header.length && header.equals(SQLITE_HEADER);
  } catch {
    return false;
  }
}

/**
 * Whether a database other than the main connection's was opened since
 * `before`: SQLite's, for another file at the path. Files, not descriptor
 * numbers (a number is used again as soon as it is closed); databases only, as
 * the main thread may open a file of its own meanwhile (a result file).
 */
function openedAnother(before: Map<string, number> | null): boolean {
  const after = openFiles();
  if (!before || !after) return false;
  return [...after].some(([file, fd]) => !before.has(file) && file !== `${opened.dev}:${opened.ino}` && isDatabase(fd));
}

/**
 * The main connection's database, opened by its path; null (told) when it
 * cannot be, or when what was opened is another file. Checkpointing the main
 * connection's log into another file (one moved over the path) would ruin that
 * file. The path is looked at before and after the open, and the descriptor
 * SQLite opened too: a file swapped in for the open and back before the second
 * look is caught only by that.
 */
function openSame(): InstanceType<typeof Database> | null {
  if (!sameFile(identityOf(file), opened)) {
    failed(`${file} is no longer the file paybatch opened`);
    return null;
  }
  const before = openFiles();
  let db: InstanceType<typeof Database>;
  try {
    db = new Database(file, { fileMustExist: true });
  } catch (error) {
    failed(`it failed: ${(error as Error).message}`);
    return null;
  }
  if (openedAnother(before) || !sameFile(identityOf(file), opened)) {
    db.close();
    failed(`${file} is no longer the file paybatch opened`);
    return null;
  }
  db.pragma('busy_timeout = 5000');
  // Pages are read from the log and written to the file: SQLite's smallest cache is enough.
  db.pragma('cache_size = -256');
  return db;
}

function checkpointEvery(db: InstanceType<typeof Database>): void {
  let stopping = false;
  let timer: NodeJS.Timeout | null = null;
  const stop = (): void => {
    stopping = true;
    if (timer) clearTimeout(timer);
    db.close();
    parentPort?.close();
  };
  const checkpoint = (): void => {
    timer = null;
    if (stopping) return;
    try {
      // exec: its result, unused, is not made into JavaScript values.
      db.exec('PRAGMA wal_checkpoint(PASSIVE)');
    } catch (error) {
      parentPort?.postMessage({ failed: `it failed: ${(error as Error).message}` });
      stop();
      return;
    }
    timer = setTimeout(checkpoint, everyMs);
  };
  parentPort?.on('message', (message: unknown) => {
    if (message === 'stop') stop();
  });
  checkpoint();
}

const db = openSame();
if (db) checkpointEvery(db);
