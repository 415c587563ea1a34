/**
 * The reads `Pipeline.follow` started and that have not ended. A round starts
 * the reads that are due without waiting for their answers, so that a read the
 * service is slow to answer holds its own row only; this keeps which rows are
 * being read (none is read again beside itself), how many (at most one round's
 * budget is under way), and the first failure that must stop the work (the
 * credentials refused), for the next round or the pipeline's idle to throw.
 */
import type { PipelineRow } from '../store/port.js';

/** [D17] This worker's part of the reads a second: all of them alone, a 1/N part with N workers sharing the service. */
export const readShare = (readsPerSecond: number, workers: number | null): number => (workers === null ? readsPerSecond : readsPerSecond / Math.max(1, workers));

/** The reads a round may have under way at this share: its whole part of a second, at least one. */
export const roundBudget = (share: number): number => Math.max(1, Math.floor(share));

/** What `read` reads cost in time at this share: the pause before the next round, so that the rate stays within it. */
export const readsCostMs = (read: number, share: number): number => Math.ceil((read * 1000) / share);

const keyOf = (row: Pick<PipelineRow, 'batch_id' | 'line'>): string => `${row.batch_id}:${row.line}`;

export class ReadsUnderWay {
  private readonly rows = new Set<string>();
  private failure: unknown = null;

  /**
   * `share`: this worker's part of the reads a second now (readShare). `told`: each failure as a read ends with it, the
   * first thrown later too (a later one is only told).
   */
  constructor(private readonly share: () => number, private readonly told: (error: unknown) => void = () => {}) {}

  get size(): number {
    return this.rows.size;
  }

  /** The rows being read ("batch:line"), a read waiting for a call slot among them. */
  keys(): string[] {
    return [...this.rows];
  }

  /** How many more reads may start now: a round's budget at this share, less the reads under way. */
  get room(): number {
    return Math.max(0, roundBudget(this.share()) - this.rows.size);
  }

  /** Of the rows listed as due (in order), those to read now: none already being read, no more than the room. */
  toStart(due: readonly PipelineRow[]): PipelineRow[] {
    return due.filter((row) => !this.rows.has(keyOf(row))).slice(0, this.room);
  }

  /** [D17] The pause `read` reads started call for before the next round, so that the rate stays within the share. */
  costMs(read: number): number {
    return readsCostMs(read, this.share());
  }

  /** Starts `read` for the row; returns the promise that settles when it ended, never rejecting (see throwFailure). */
  start(row: PipelineRow, read: () => Promise<unknown>): Promise<void> {
    const key = keyOf(row);
    this.rows.add(key);
    return read().then(() => {}, (error: unknown) => {
      this.failure ??= error;
      this.told(error);
    }).finally(() => this.rows.delete(key));
  }

  /** Throws the first failure a read ended with since the last call, once. */
  throwFailure(): void {
    const failure = this.failure;
    if (failure === null) return;
    this.failure = null;
    throw failure;
  }
}
