/**
 * SQLite's checkpoints off the main thread while rows are being sent.
 *
 * By default SQLite checkpoints inside the commit that takes the write-ahead
 * log past 1,000 pages: it copies them into the database and syncs both files,
 * 5 to 15 ms during which paybatch's event loop stands still and every answer
 * that arrives waits (at L = 20 ms, about every tenth of a second). Under a
 * steady stream of group commits (sending, following), a worker thread takes
 * the checkpoints over, on a connection of its own, and the main connection's
 * own are made four times rarer; after a few quiet seconds the thread ends and
 * the main connection checkpoints as before.
 *
 * Why the main connection still checkpoints at all: the log starts again from
 * its beginning (and is cut back to its size limit) only when a writer finds
 * every frame of it copied, and the thread's checkpoints never catch up with a
 * writer that commits while they copy (a million-row `run` grew its log to 775
 * MB with the thread alone). The main connection's own checkpoint, made between
 * its commits, copies what is left (the thread has copied the rest) and lets the
 * log start again. The thread is started only under load:
 * its own heap and modules take about 10 MB, which a batch being taken in (the
 * highest point of memory) or a quiet daemon need not carry.
 *
 * If the thread fails, the main connection checkpoints itself again: the log
 * never grows unchecked.
 */
import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { SqliteDatabase } from './database.js';
import { workerScript } from '../../worker-script.js';
import { heapSettings } from '../../heap.js';

/** Group commits in one second that start the thread, unless configured (store.checkpoint_thread_groups_per_second). */
export const BUSY_GROUPS_PER_SECOND = 100;
/** Time with no group commit after which the thread ends. */
const QUIET_MS = 5000;
/** How often the thread checkpoints: about 70 commits' pages at L = 20 ms. */
const CHECKPOINT_EVERY_MS = 50;
/** SQLite's own default, given back to the main connection. */
const AUTOCHECKPOINT_PAGES = 1000;
/** The main connection's own while the thread runs: 16 MB of log, the size it is cut back to (database.ts). */
export const TAIL_CHECKPOINT_PAGES = 4000;

export class Checkpointer {
  /** The thread checkpointing now. */
  private worker: Worker | null = null;
  /** Threads not ended yet (the current one, one still ending), each with its end. */
  private readonly ending = new Map<Worker, Promise<void>>();
  /** The second being counted (ms on the clock) and its group commits so far. */
  private second = 0;
  private groups = 0;
  private lastGroupAt = 0;
  private quiet: NodeJS.Timeout | null = null;
  /** The thread failed once: the main connection checkpoints itself from then on. */
  private failed = false;
  private closed = false;
  /** The database file the main connection opened (device and inode): a thread opens it by its path. */
  private readonly opened: FileIdentity | null;

  /**
   * `options`: the group commits in a second that start the thread (store.checkpoint_thread_groups_per_second); for
   * tests, the worker's module (found when first needed otherwise) and the quiet time that ends it.
   */
  constructor(private readonly db: SqliteDatabase, private readonly file: string, private readonly options: { script?: string; quietMs?: number; busyGroupsPerSecond?: number } = {}) {
    this.opened = identityOf(file);
  }

  /** Whether the thread is checkpointing now. */
  get running(): boolean {
    return this.worker !== null;
  }

  /** Whether the thread failed or was refused, said once: the main connection checkpoints itself from then on. */
  get fallenBack(): boolean {
    return this.failed;
  }

  /** A group commit was made: counted, and the thread started when they come fast enough. */
  groupCommitted(now = Date.now()): void {
    this.lastGroupAt = now;
    if (this.worker || this.failed || this.closed) return;
    const second = Math.floor(now / 1000);
    if (second !== this.second) {
      this.second = second;
      this.groups = 0;
    }
    this.groups += 1;
    if (this.groups >= (this.options.busyGroupsPerSecond ?? BUSY_GROUPS_PER_SECOND)) this.start();
  }

  private start(): void {
    if (!this.db.open) return;
    // Another file at the path than the one this connection has open (moved aside, restored over it while running): a
    // thread opening the path would checkpoint this connection's log into that file.
    if (!sameFile(identityOf(this.file), this.opened)) {
      this.fellBack(`${this.file} is no longer the file paybatch opened`);
      return;
    }
    // Set before the thread exists: nothing after its start can fail and leave it unwatched.
    this.db.pragma(`wal_autocheckpoint = ${TAIL_CHECKPOINT_PAGES}`);
    let worker: Worker;
    try {
      // Small heap limits: it holds no more than a statement's result at a time; SQLite's cache is outside them.
      worker = new Worker(this.options.script ?? workerScript(import.meta.url, 'checkpoint-worker.js'), {
        workerData: { file: this.file, everyMs: CHECKPOINT_EVERY_MS, opened: this.opened, heap: heapSettings() }, resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 8 },
      });
    } catch (error) {
      this.fellBack(reasonOf(error));
      return;
    }
    this.worker = worker;
    // Never keeps the process alive while it works: a command ends when its work has, and closes its store.
    worker.unref();
    // What an older thread, still ending, says or does changes nothing for the one after it.
    worker.on('message', (message: { failed?: string }) => {
      if (typeof message.failed === 'string' && this.worker === worker) this.fellBack(message.failed);
    });
    worker.on('error', (error: unknown) => {
      if (this.worker === worker) this.fellBack(reasonOf(error));
    });
    this.ending.set(worker, new Promise((resolve) => worker.once('exit', () => {
      this.ending.delete(worker);
      if (this.worker === worker) this.handBack();
      resolve();
    })));
    this.watchForQuiet();
  }

  /** The thread is done with (stopped, failed, ended): the main connection checkpoints itself again. */
  private handBack(): void {
    this.worker = null;
    if (this.quiet) clearTimeout(this.quiet);
    this.quiet = null;
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
  }

  private fellBack(why: string): void {
    if (this.failed) return;
    this.failed = true;
    process.stderr.write(`paybatch: warning: the database's checkpoints on a thread of their own stopped (${why}); the main thread makes them again\n`);
    this.handBack();
  }

  private watchForQuiet(): void {
    const quietMs = this.options.quietMs ?? QUIET_MS;
    this.quiet = setTimeout(() => {
      this.quiet = null;
      if (Date.now() - this.lastGroupAt >= quietMs) void this.stop();
      else this.watchForQuiet();
    }, quietMs);
    this.quiet.unref();
  }

  /**
   * Ends the thread (between two of its checkpoints) and gives checkpoints back
   * to the main connection; resolves once every thread has ended, one that
   * failed or was stopped before included.
   */
  async stop(): Promise<void> {
    const worker = this.worker;
    if (worker) {
      this.handBack();
      worker.postMessage('stop');
    }
    // Held again while they end: a process with nothing else to do would otherwise not wait for their end (a `run`
    // closing its store at the end ended with exit 13, its last await unsettled).
    for (const ending of this.ending.keys()) ending.ref();
    await Promise.all(this.ending.values());
  }

  /** For good: no thread is started again. */
  async close(): Promise<void> {
    this.closed = true;
    await this.stop();
  }
}

export interface FileIdentity {
  dev: number;
  ino: number;
}

/** The file at `path` (device and inode), or null when there is none. */
export function identityOf(path: string): FileIdentity | null {
  const stat = statSync(path, { throwIfNoEntry: false });
  return stat ? { dev: stat.dev, ino: stat.ino } : null;
}

/** Whether two identities are of one file (false when either is missing). */
export function sameFile(a: FileIdentity | null, b: FileIdentity | null): boolean {
  return a !== null && b !== null && a.dev === b.dev && a.ino === b.ino;
}

/** Why a thread failed, in words: what it threw may come across without a message. */
function reasonOf(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return `it failed: ${typeof message === 'string' && message !== '' ? message : String(error)}`;
}
