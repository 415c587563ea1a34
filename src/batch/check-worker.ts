/** A worker thread that checks pieces of a CSV batch file (see segment-check.ts, parallel-check.ts). */
import { parentPort } from 'node:worker_threads';
import type { SegmentTask } from './segment-check.js';
import { checkSegment } from './segment-check.js';

parentPort?.on('message', (task: SegmentTask) => {
  try {
    const checked = checkSegment(task);
    parentPort?.postMessage({ checked }, [checked.lines.buffer, checked.prints.buffer, checked.valid.buffer] as ArrayBuffer[]);
  } catch (error) {
    parentPort?.postMessage({ index: task.index, failed: (error as Error).stack ?? String(error) });
  }
});

// Ready: the pool gives this worker pieces from now on.
parentPort?.postMessage({ ready: true });
