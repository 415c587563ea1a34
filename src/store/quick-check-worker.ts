/** A worker thread that runs SQLite's quick check on the database (see background-check.ts). */
import { parentPort, workerData } from 'node:worker_threads';
import { holdHeapFlags } from '../heap.js';

// First: this worker's start put the heap's flags back for the whole process (see heap.ts).
holdHeapFlags();
const { default: Database } = await import('better-sqlite3');
const { isDamage, quickCheckProblems } = await import('./database.js');

const file = (workerData as { file: string }).file;
try {
  // Its own connection, reading only: a snapshot of the database while the work goes on beside it.
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    // SQLite's own default cache, as the main connection's (database.ts): every page passes through it once.
    db.pragma('cache_size = -2000');
    parentPort?.postMessage({ problems: quickCheckProblems(db) });
  } finally {
    db.close();
  }
} catch (error) {
  const { code, message } = error as { code?: string; message: string };
  // Damage SQLite raised on opening is an answer; anything else is checked again on the main thread.
  parentPort?.postMessage(isDamage(error) ? { problems: [message] } : { failed: { code, message } });
}
