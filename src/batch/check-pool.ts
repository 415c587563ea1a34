/**
 * The checkers of a file's pieces (see parallel-check.ts): worker threads, and
 * this thread too when it has nothing else to do but read the file.
 *
 * A worker is given up to two pieces at once (a pain.001's four), so that it has the next one
 * while this thread is busy (reading, or checking a piece of its own, which
 * holds its event loop for the piece's few milliseconds). A worker is free
 * once it says it is ready (its modules loaded). On Node 20 a worker's start
 * puts V8's flags back as they were at launch, for the whole process: the
 * worker sets the heap's settings (heap.ts) again as its first step, and they
 * are set again here once it is ready; without them this thread's young
 * generation grows to 32 MB while the file is read. A worker that fails fails
 * every piece not yet checked.
 *
 * A worker is ended only once it has loaded its modules (or has exited): its
 * module awaits the checking modules, and a thread ended while V8 runs such a
 * module aborts the whole process ("Check failed: (location_) != nullptr",
 * nodejs/node#43182; seen once here, when a small file was read before its
 * workers were ready).
 */
import { Worker } from 'node:worker_threads';
import { heapSettings, keepHeapAsSet } from '../heap.js';
import type { CheckedSegment, SegmentTask } from './segment-check.js';
import { checkSegment } from './segment-check.js';

/** A piece to check: a CSV file's (segment-check.ts) or a pain.001's (iso20022/pain001-segment.ts). */
export interface PoolTask {
  index: number;
  /** The line its first row is on. */
  startLine: number;
}

/** Pieces given to a worker before it answers the first (unless the pool is told otherwise). */
const AHEAD = 2;
/** How long closing waits for a worker still loading its modules before it ends it all the same: a load never hangs a close. */
const LOAD_WAIT_MS = 30_000;

interface Waiting<Task extends PoolTask, Checked extends CheckedSegment> {
  task: Task;
  resolve(checked: Checked): void;
  reject(error: unknown): void;
}

interface Slot<Task extends PoolTask, Checked extends CheckedSegment> {
  worker: Worker;
  ready: boolean;
  /** Resolves once the worker has said it is ready, or has exited: from then on it may be ended. */
  loaded: Promise<void>;
  /** Pieces given to it, in the order it answers them. */
  given: Waiting<Task, Checked>[];
}

export class CheckPool<Task extends PoolTask = SegmentTask, Checked extends CheckedSegment = CheckedSegment> {
  private readonly slots: Slot<Task, Checked>[] = [];
  private readonly queue: Waiting<Task, Checked>[] = [];
  private failure: unknown = null;
  private checkingHere = false;
  private closing = false;
  private piecesHere = 0;
  private allReady: () => void = () => {};
  /** Resolves once every worker has said it is ready. */
  readonly ready = new Promise<void>((resolve) => (this.allReady = resolve));

  /**
   * `script`: the worker's module (check-worker.js), started with `workerData` (what it checks); `thisThread`: whether this
   * thread checks pieces too, with `checkHere`; `ahead`: the pieces a worker is given at most at once.
   */
  constructor(script: string, workers: number, private readonly thisThread: boolean, private readonly checkHere: (task: Task) => Checked = checkSegment as unknown as (task: Task) => Checked, workerData: unknown = { kind: 'csv' }, private readonly ahead = AHEAD) {
    for (let i = 0; i < workers; i++) {
      // A small young generation: pieces are short-lived, and the process's memory stays flat.
      let loadedNow = (): void => {};
      const loaded = new Promise<void>((resolve) => (loadedNow = resolve));
      const slot: Slot<Task, Checked> = { worker: new Worker(script, { workerData: { ...(workerData as object), heap: heapSettings() }, resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 } }), ready: false, given: [], loaded };
      slot.worker.on('message', (answer: { ready?: true; checked?: Checked; failed?: string }) => {
        if (answer.ready) loadedNow();
        this.answered(slot, answer);
      });
      slot.worker.on('error', (error) => this.fail(error));
      // A worker that ends without an error (it exited) would leave its pieces unanswered, and the file unread.
      slot.worker.on('exit', (code) => {
        loadedNow();
        if (!this.closing && (!slot.ready || slot.given.length > 0 || this.queue.length > 0)) this.fail(new Error(`a worker thread checking the file stopped (exit code ${code})`));
      });
      this.slots.push(slot);
    }
    if (workers === 0) this.allReady();
  }

  /** How many pieces this thread checked. */
  get checkedHere(): number {
    return this.piecesHere;
  }

  /** How many pieces are checked at once. */
  get checkers(): number {
    return this.slots.length + (this.thisThread ? 1 : 0);
  }

  check(task: Task): Promise<Checked> {
    if (this.failure !== null) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.queue.push({ task, resolve, reject });
      this.next();
    });
  }

  private answered(slot: Slot<Task, Checked>, answer: { ready?: true; checked?: Checked; failed?: string }): void {
    if (answer.ready) {
      keepHeapAsSet();
      slot.ready = true;
      if (this.slots.every((s) => s.ready)) this.allReady();
    } else {
      const waiting = slot.given.shift();
      if (waiting && answer.checked) waiting.resolve(answer.checked);
      else waiting?.reject(new Error(`checking lines from ${waiting.task.startLine} failed in a worker thread: ${answer.failed}`));
    }
    this.next();
  }

  private fail(error: unknown): void {
    this.failure ??= error;
    // Whoever waits for the workers to be ready goes on, and meets the failure at its first piece.
    this.allReady();
    for (const waiting of [...this.queue.splice(0), ...this.slots.flatMap((slot) => slot.given.splice(0))]) waiting.reject(error);
  }

  private next(): void {
    while (this.queue.length > 0 && this.failure === null) {
      const slot = this.leastLoaded();
      if (slot) {
        const waiting = this.queue.shift() as Waiting<Task, Checked>;
        slot.given.push(waiting);
        slot.worker.postMessage(waiting.task);
      } else if (this.thisThread && !this.checkingHere) {
        this.checkingHere = true;
        const waiting = this.queue.shift() as Waiting<Task, Checked>;
        // Not within check(): the caller goes on reading first.
        setImmediate(() => this.checkOnThisThread(waiting));
      } else {
        return;
      }
    }
  }

  /** The ready worker with the fewest pieces, if one has room for another. */
  private leastLoaded(): Slot<Task, Checked> | undefined {
    let best: Slot<Task, Checked> | undefined;
    for (const slot of this.slots) if (slot.ready && slot.given.length < this.ahead && (!best || slot.given.length < best.given.length)) best = slot;
    return best;
  }

  private checkOnThisThread(waiting: Waiting<Task, Checked>): void {
    try {
      waiting.resolve(this.checkHere(waiting.task));
      this.piecesHere += 1;
    } catch (error) {
      waiting.reject(error);
    } finally {
      this.checkingHere = false;
      this.next();
    }
  }

  /** Ends the workers, each once it has loaded its modules (see above): a pool closed at once waits for that. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.slots.map(async (slot) => {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([slot.loaded, new Promise<void>((resolve) => (timer = setTimeout(resolve, LOAD_WAIT_MS)))]);
      clearTimeout(timer);
      await slot.worker.terminate();
    }));
  }
}
