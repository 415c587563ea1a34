/**
 * The audit trail checked in ranges on worker threads (audit-range-worker.ts),
 * each with a read-only connection of its own: reading the rows is most of the
 * work, and SQLite reads on every connection at once. The trail through the
 * head is cut into a few ranges per thread (a thread slowed by the machine's
 * other work leaves more to the others), handed out in order, and no range
 * after one at fault is handed out (nothing after the first break matters).
 * A thread that cannot start or fails makes the whole check fail: the caller
 * then walks the trail itself, so it is never skipped.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { RangeSummary } from '../../audit/chain-range.js';
import { heapSettings } from '../../heap.js';
import { workerScript } from '../../worker-script.js';

export interface RangeOptions {
  /** Threads (default: two, or one on a machine of one core). */
  threads?: number;
  /** Ranges per thread: more balance the threads, each one more seam (default 4). */
  rangesPerThread?: number;
  /** The least entries (sequence numbers) a range spans (default 256). */
  minRange?: number;
}

const YOUNG_MB = 8;

type Answer = { index: number; summary: RangeSummary } | { index: number; failed: string };

/** The ranges (after, through] that cut the sequence numbers 1 to `throughSeq`. */
export function cutRanges(throughSeq: number, count: number, minRange: number): { after: number; through: number }[] {
  const span = Math.max(minRange, Math.ceil(throughSeq / count));
  const ranges: { after: number; through: number }[] = [];
  for (let after = 0; after < throughSeq; after += span) ranges.push({ after, through: Math.min(throughSeq, after + span) });
  return ranges;
}

/** Every range's summary, in order; those after the first at fault are left out. Rejects when a thread fails. */
export async function checkAuditRanges(file: string, throughSeq: number, options: RangeOptions = {}): Promise<RangeSummary[]> {
  const threads = options.threads ?? Math.min(2, availableParallelism());
  const ranges = cutRanges(throughSeq, threads * (options.rangesPerThread ?? 4), options.minRange ?? 256);
  const summaries: RangeSummary[] = [];
  let next = 0;
  // The first range at fault: none after it is handed out, nor kept.
  let faultAt = ranges.length;
  let failed = false;
  const script = workerScript(import.meta.url, 'audit-range-worker.js');
  const run = (worker: Worker): Promise<void> => new Promise((resolve, reject) => {
    const handOut = (): void => {
      if (next >= faultAt || failed) {
        worker.postMessage('stop');
        return;
      }
      const index = next;
      next += 1;
      worker.postMessage({ index, ...(ranges[index] as { after: number; through: number }) });
    };
    worker.on('message', (answer: Answer) => {
      if ('failed' in answer) {
        failed = true;
        reject(new Error(`the audit trail's check failed on a thread: ${answer.failed}`));
        worker.postMessage('stop');
        return;
      }
      summaries[answer.index] = answer.summary;
      if (answer.summary.fault) faultAt = Math.min(faultAt, answer.index);
      handOut();
    });
    worker.once('error', reject);
    worker.once('exit', () => resolve());
    handOut();
  });
  const workers = Array.from({ length: Math.min(threads, ranges.length) }, () => new Worker(script, {
    // A young generation grown to 8 MB a half: the rows of a page are garbage at once (at 4 MB in all, collecting took a third more CPU).
    workerData: { file, heap: heapSettings(), youngMb: YOUNG_MB }, resourceLimits: { maxYoungGenerationSizeMb: 2 * YOUNG_MB, maxOldGenerationSizeMb: 32 },
  }));
  await Promise.all(workers.map(run));
  return summaries.slice(0, Math.min(faultAt + 1, ranges.length));
}
