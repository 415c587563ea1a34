/**
 * A worker thread that checks ranges of the audit trail (audit-range-read.ts)
 * on a read-only connection of its own, claiming them one after another from
 * those it shares with the main thread (audit-ranges.ts), and answers each
 * with its summary; it ends, its connection closed, when none is left.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { growThreadYoungGeneration, heapGiven, holdHeapFlags } from '../../heap.js';

// First: this worker's start put the heap's flags back for the whole process (see heap.ts).
holdHeapFlags(heapGiven(workerData));
const { file, ranges, claims, youngMb } = workerData as { file: string; ranges: { after: number; through: number }[]; claims: Int32Array; youngMb: number };
if (youngMb > 0) growThreadYoungGeneration(youngMb, heapGiven(workerData));
const { default: Database } = await import('better-sqlite3');
const { checkClaimedRanges, openForRanges } = await import('./audit-range-read.js');

const db = openForRanges(Database, file);
try {
  checkClaimedRanges(db, ranges, claims, (index, summary) => parentPort?.postMessage({ index, summary }));
} catch (error) {
  parentPort?.postMessage({ failed: (error as Error).message });
} finally {
  db.close();
  parentPort?.close();
}
