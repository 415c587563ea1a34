/** A worker thread that checks pieces of a CSV batch file (see segment-check.ts, parallel-check.ts). */
import { parentPort, workerData } from 'node:worker_threads';
import { heapGiven, holdHeapFlags } from '../heap.js';
import type { SegmentTask } from './segment-check.js';

// First, before the checking modules load: this worker's start put the heap's flags back for the whole process.
holdHeapFlags(heapGiven(workerData));
const { checkSegment } = await import('./segment-check.js');

parentPort?.on('message', (task: SegmentTask) => {
  try {
    const checked = checkSegment(task);
    parentPort?.postMessage({ checked }, [checked.lines.buffer, checked.prints.buffer, checked.valid.buffer, checked.validAmounts.buffer, checked.amountCurrencyAt.buffer] as ArrayBuffer[]);
  } catch (error) {
    parentPort?.postMessage({ index: task.index, failed: (error as Error).stack ?? String(error) });
  }
});

// Ready: the pool gives this worker pieces from now on.
parentPort?.postMessage({ ready: true });
