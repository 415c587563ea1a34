/** A worker thread that runs SQLite's quick check on the database (see background-check.ts). */
import { parentPort, workerData } from 'node:worker_threads';
import { heapGiven, holdHeapFlags } from '../../heap.js';

// First: this worker's start put the heap's flags back for the whole process (see heap.ts).
holdHeapFlags(heapGiven(workerData));
const { isDamage, quickCheckFile } = await import('./database.js');

try {
  parentPort?.postMessage({ problems: quickCheckFile((workerData as { file: string }).file) });
} catch (error) {
  const { code, message } = error as { code?: string; message: string };
  // Damage SQLite raised on opening is an answer; anything else is checked again on the main thread.
  parentPort?.postMessage(isDamage(error) ? { problems: [message] } : { failed: { code, message } });
}
