/**
 * The audit trail checked in ranges on worker threads (audit-range-worker.ts),
 * each with a read-only connection of its own: reading the rows is most of the
 * work, and SQLite reads on every connection at once. The trail through the
 * head is cut into a few ranges per thread (a thread slowed by the machine's
 * other work leaves more to the others), claimed in order, and no range
 * after one at fault is claimed (nothing after the first break matters). The
 * main thread checks ranges too, beside one worker: one thread's start and
 * heap fewer.
 * A thread that cannot start or fails makes the whole check fail: the caller
 * then walks the trail itself, so it is never skipped.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { RangeSummary } from '../../audit/chain-range.js';
import Database from 'better-sqlite3';
import { growThreadYoungGeneration, heapSettings } from '../../heap.js';
import { workerScript } from '../../worker-script.js';
import { checkClaimedRanges, openForRanges } from './audit-range-read.js';

export interface RangeOptions {
  /** Threads (default: two, or one on a machine of one core). */
  threads?: number;
  /** Ranges per thread: more balance the threads, each one more seam (default 4). */
  rangesPerThread?: number;
  /** The least entries (sequence numbers) a range spans (default 256). */
  minRange?: number;
}

const YOUNG_MB = 8;

type Answer = { index: number; summary: RangeSummary } | { failed: string };

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
  // Shared by every thread: the next range to claim, and the first found at fault (none after it is claimed).
  const claims = new Int32Array(new SharedArrayBuffer(8));
  claims[1] = ranges.length;
  const summaries: RangeSummary[] = [];
  const script = workerScript(import.meta.url, 'audit-range-worker.js');
  // The main thread is one of the threads: one start and one heap fewer.
  const workers = Array.from({ length: Math.min(threads, ranges.length) - 1 }, () => new Worker(script, {
    // A young generation grown to 8 MB a half: the rows of a page are garbage at once (at 4 MB in all, collecting took a third more CPU).
    workerData: { file, ranges, claims, heap: heapSettings(), youngMb: YOUNG_MB }, resourceLimits: { maxYoungGenerationSizeMb: 2 * YOUNG_MB, maxOldGenerationSizeMb: 32 },
  }));
  const ended = workers.map((worker) => new Promise<void>((resolve, reject) => {
    worker.on('message', (answer: Answer) => {
      if ('failed' in answer) {
        // None is claimed after it: the others end soon, and the caller walks the trail instead.
        Atomics.store(claims, 1, -1);
        reject(new Error(`the audit trail's check failed on a thread: ${answer.failed}`));
        return;
      }
      summaries[answer.index] = answer.summary;
    });
    worker.once('error', reject);
    worker.once('exit', () => resolve());
  }));
  try {
    const db = openForRanges(Database, file);
    try {
      if (ranges.length > 0) growThreadYoungGeneration(YOUNG_MB, heapSettings());
      checkClaimedRanges(db, ranges, claims, (index, summary) => (summaries[index] = summary));
    } finally {
      db.close();
    }
  } catch (error) {
    // Nothing more is claimed; the threads end after the range they are on, and what they say is no longer heard.
    Atomics.store(claims, 1, -1);
    await Promise.allSettled(ended);
    throw error;
  }
  await Promise.all(ended);
  // Up to the first range at fault, every one was claimed and told before its thread ended: a gap would be a range unchecked.
  const wanted = Math.min(Atomics.load(claims, 1) + 1, ranges.length);
  const kept = Array.from({ length: wanted }, (_, index) => summaries[index]);
  if (kept.some((summary) => summary === undefined)) throw new Error('a range of the audit trail was not checked');
  return kept as RangeSummary[];
}
