/**
 * A worker thread that checks pieces of a batch file: of a CSV file (see segment-check.ts, parallel-check.ts) or of a
 * pain.001 (iso20022/pain001-segment.ts, pain001-parallel.ts), as its workerData says; it loads only that one's modules.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { heapGiven, holdHeapFlags } from '../heap.js';
import type { CheckedSegment } from './segment-check.js';

// First, before the checking modules load: this worker's start put the heap's flags back for the whole process.
holdHeapFlags(heapGiven(workerData));
const kind = (workerData as { kind?: 'csv' | 'pain001' } | null)?.kind ?? 'csv';
const check = (kind === 'pain001' ? (await import('./iso20022/pain001-segment.js')).checkPain001Segment : (await import('./segment-check.js')).checkSegment) as (task: { index: number }) => CheckedSegment;

parentPort?.on('message', (task: { index: number }) => {
  try {
    const checked = check(task);
    parentPort?.postMessage({ checked }, [checked.lines.buffer, checked.prints.buffer, checked.valid.buffer, checked.validAmounts.buffer, checked.amountCurrencyAt.buffer] as ArrayBuffer[]);
  } catch (error) {
    parentPort?.postMessage({ index: task.index, failed: (error as Error).stack ?? String(error) });
  }
});

// Ready: the pool gives this worker pieces from now on.
parentPort?.postMessage({ ready: true });
