/**
 * Which due rows a round of reads starts (reads-under-way.ts): none already
 * being read, no more than the polling budget leaves with the reads under way
 * counted; the pause a round's reads call for; a read's failure told, and
 * thrown once by the next look. And the engine's own use of them: a pipeline
 * with several workers paces its rounds by its share of the rate.
 */
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/config.js';
import { Pipeline } from '../../src/engine/pipeline.js';
import type { PipelineDeps } from '../../src/engine/pipeline.js';
import { ReadsUnderWay, readShare, readsCostMs, roundBudget } from '../../src/engine/reads-under-way.js';
import type { PipelineRow } from '../../src/store/port.js';
import { gate } from '../helpers/gates.js';

const row = (line: number): PipelineRow => ({ batch_id: 'B1', line } as PipelineRow);
const lines = (rows: readonly PipelineRow[]): number[] => rows.map((r) => r.line);

describe('reads under way', () => {
  it('starts the rows due in order, up to the budget, none being read; the reads under way take their share of it', async () => {
    let share = 2;
    const reads = new ReadsUnderWay(() => share);
    expect(lines(reads.toStart([row(1), row(2), row(3)]))).toEqual([1, 2]);
    const held = gate();
    const first = reads.start(row(1), () => held.opened);
    expect([reads.size, reads.room]).toEqual([1, 1]);
    // Told as a row at work (the daemon's sweep of idle claims keeps it claimed), whether its read has a slot yet or not.
    expect(reads.keys()).toEqual(['B1:1']);
    // Row 1 is listed again (still due): not read beside itself; one read of the budget of 2 is under way.
    expect(lines(reads.toStart([row(1), row(2), row(3)]))).toEqual([2]);
    // Not listed again (a webhook pushed its next read back): it takes its share all the same.
    expect(lines(reads.toStart([row(2), row(3)]))).toEqual([2]);
    // The share fell (more workers): no room while the read under way fills it.
    share = 1;
    expect(lines(reads.toStart([row(1), row(2)]))).toEqual([]);
    expect(reads.room).toBe(0);
    held.open();
    await first;
    expect([reads.size, reads.room]).toEqual([0, 1]);
    expect(lines(reads.toStart([row(1), row(2)]))).toEqual([1]);
  });

  it('a read that failed ends without rejecting; each failure is told, the first thrown by the next look, once', async () => {
    const told: string[] = [];
    const reads = new ReadsUnderWay(() => 5, (error) => told.push((error as Error).message));
    await reads.start(row(4), () => Promise.reject(new Error('credentials refused')));
    await reads.start(row(5), () => Promise.reject(new Error('a second failure')));
    expect(reads.size).toBe(0);
    expect(() => reads.throwFailure()).toThrow('credentials refused');
    expect(() => reads.throwFailure()).not.toThrow();
    expect(told).toEqual(['credentials refused', 'a second failure']);
  });

  it('[D17] N workers, each pacing its rounds by its share, read no more than reads_per_second together, whatever loop_ms', () => {
    for (const readsPerSecond of [1, 5, 7, 50, 500]) {
      for (const workers of [null, 1, 2, 3, 8, 10]) {
        const share = readShare(readsPerSecond, workers);
        const round = roundBudget(share);
        // A full round every readsCostMs(round) ms, at the least (loop_ms only makes the pause longer).
        const together = (workers ?? 1) * (round / (readsCostMs(round, share) / 1000));
        expect(together).toBeLessThanOrEqual(readsPerSecond);
        expect(round).toBeGreaterThanOrEqual(1);
      }
    }
    // Eight workers sharing 5 reads a second: one read a round each, then 1.6 s before the next.
    expect(readsCostMs(roundBudget(readShare(5, 8)), readShare(5, 8))).toBe(1600);
  });

  it('[D17] the pipeline paces by its worker\'s share: alone the whole rate, one of eight workers an eighth of it', () => {
    const engine = configSchema.parse({ engine: { polling: { reads_per_second: 5 } } }).engine;
    const pipeline = (workers: number | null): Pipeline => new Pipeline({
      store: {}, client: {}, clock: { now: () => 0 }, engine, log: () => {}, shared: workers === null ? undefined : { liveWorkers: workers },
    } as unknown as PipelineDeps);
    expect(pipeline(null).readsCostMs(5)).toBe(1000);
    expect(pipeline(1).readsCostMs(5)).toBe(1000);
    expect(pipeline(8).readsCostMs(1)).toBe(1600);
    expect(pipeline(2).readsCostMs(2)).toBe(800);
  });
});
