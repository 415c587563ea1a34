/**
 * A worker thread that copies the write-ahead log back into the database
 * (SQLite's checkpoint) on a connection of its own, while the main thread
 * writes (see checkpointer.ts). A PASSIVE checkpoint never waits for the writer
 * and never holds it up; one with nothing new to copy costs almost nothing.
 * Stops when told, between two checkpoints, and closes its connection: a
 * thread terminated from outside while SQLite works can take the process down.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { holdHeapFlags } from '../heap.js';

// First: this worker's start put the heap's flags back for the whole process (see heap.ts).
holdHeapFlags();
const { default: Database } = await import('better-sqlite3');

const { file, everyMs } = workerData as { file: string; everyMs: number };
const db = new Database(file, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
// Pages are read from the log and written to the file: SQLite's smallest cache is enough.
db.pragma('cache_size = -256');

let stopping = false;
let timer: NodeJS.Timeout | null = null;

function checkpoint(): void {
  timer = null;
  if (stopping) return;
  try {
    // exec: its result, unused, is not made into JavaScript values.
    db.exec('PRAGMA wal_checkpoint(PASSIVE)');
  } catch (error) {
    // Told to the main thread, which goes back to checkpointing itself; this thread ends.
    parentPort?.postMessage({ failed: (error as Error).message });
    stop();
    return;
  }
  timer = setTimeout(checkpoint, everyMs);
}

function stop(): void {
  stopping = true;
  if (timer) clearTimeout(timer);
  db.close();
  parentPort?.close();
}

parentPort?.on('message', (message: unknown) => {
  if (message === 'stop') stop();
});
checkpoint();
