/**
 * A worker thread that checks ranges of the audit trail (audit-range-read.ts)
 * on a read-only connection of its own, one range at a time as the main
 * thread hands them out (audit-ranges.ts), and answers each with its summary.
 * Closes its connection when told to stop: a thread terminated from outside
 * while SQLite reads can take the process down.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { growThreadYoungGeneration, heapGiven, holdHeapFlags } from '../../heap.js';

// First: this worker's start put the heap's flags back for the whole process (see heap.ts).
holdHeapFlags(heapGiven(workerData));
const { youngMb } = workerData as { youngMb: number };
if (youngMb > 0) growThreadYoungGeneration(youngMb, heapGiven(workerData));
const { default: Database } = await import('better-sqlite3');
const { checkAuditRange } = await import('./audit-range-read.js');

const db = new Database((workerData as { file: string }).file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
db.pragma('cache_size = -2000');

parentPort?.on('message', (task: { index: number; after: number; through: number } | 'stop') => {
  if (task === 'stop') {
    db.close();
    parentPort?.close();
    return;
  }
  try {
    parentPort?.postMessage({ index: task.index, summary: checkAuditRange(db, task.after, task.through) });
  } catch (error) {
    parentPort?.postMessage({ index: task.index, failed: (error as Error).message });
  }
});
