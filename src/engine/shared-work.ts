/**
 * One worker among several on a shared database (PostgreSQL): its lease, kept
 * alive while the process lives, and the claims it takes under it. A worker
 * works on a row only while it holds the row's claim, and calls the service
 * only while it holds one of the call slots, of which there are as many as the
 * service allows at once for all workers together (engine.service_concurrency).
 * A worker that dies holds nothing once its lease expires: its rows, slots and
 * unfinished intakes go to the others, which resolve what it left in flight by
 * lookup, as a restart does.
 */
import { UNRECORDED_FILE_MS } from '../config/config.js';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock } from '../clock.js';
import { ExitCode, PaybatchError } from '../errors.js';
import type { PipelineRow, SharedWorkStore, WebhookEvent, WorkerRecord } from '../store/port.js';

/** How long a worker waits before looking for a free call slot again, at most. */
const SLOT_WAIT_MAX_MS = 50;
/**
 * How long a call slot stays with this worker once its step has ended, for the next step here to take without asking
 * the database: taking and giving back are two writes each step, and the next step usually starts within a round trip.
 * Shorter than a waiting worker's longest look (SLOT_WAIT_MAX_MS): a slot kept idle costs another worker no more than
 * its own wait would.
 */
const SLOT_KEPT_MS = 20;
/**
 * How long after its take a slot may still be kept for the next step: past it, it goes back to the database when its
 * step ends, where another worker waiting for one may take it (a busy worker would otherwise never let it go).
 */
const SLOT_REUSE_MS = 1_000;

/** A call slot as this worker took it: `mark` is written as its taken_at, one value per take, so that a return frees that take only. */
interface TakenSlot { slot: number; mark: number }

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface SharedWorkOptions {
  name: string;
  leaseMs: number;
  /** Calls to the service in flight at once, across all workers. */
  serviceConcurrency: number;
  /** How long a file claimed but not recorded waits before it is put back (store.unrecorded_file_ms); 10 minutes unset. */
  unrecordedFileMs?: number;
}

export class SharedWork {
  private lostWith: (why: string) => void = () => {};
  /** Resolves if the lease is lost (another process took the name over, or renewals failed past the lease): the worker must stop. */
  readonly lost = new Promise<string>((resolve) => (this.lostWith = resolve));
  private timer: NodeJS.Timeout | null = null;
  /** Call slots this worker holds in the database for a step: used by a call under way, or kept for the next step. */
  private readonly slotsHeld = new Set<number>();
  /** Of those, the ones no step uses now, kept for SLOT_KEPT_MS (last kept, first taken). */
  private readonly keptSlots: TakenSlot[] = [];
  private keptTimer: NodeJS.Timeout | null = null;
  /** Slots whose return is under way, with how many returns of each: the sweep leaves them alone until answered. */
  private readonly givingBack = new Map<number, number>();
  /** The last mark given to a take: every take's is higher. */
  private lastMark = 0;
  /**
   * Call slots whose call ended but whose return failed (the database did not answer), with their take's mark:
   * returned again before the next slot is taken. Left to the sweep instead, every slot could stay taken by calls long
   * ended, and a step waiting for one (a read, in the daemon's loop) would keep the sweep from running: nothing sent
   * again. A return freeing that take only, a return applied whose answer was lost frees nothing once the slot is taken
   * again.
   */
  private readonly unreturned = new Map<number, number>();
  private returning: Promise<void> | null = null;
  private liveCount = 1;

  private constructor(
    readonly store: SharedWorkStore,
    readonly clock: Clock,
    private readonly me: WorkerRecord,
    private readonly options: SharedWorkOptions,
  ) {}

  get name(): string {
    return this.me.name;
  }

  /** How long the lease lasts unrenewed. */
  get leaseMs(): number {
    return this.options.leaseMs;
  }

  /** How long a file in processing/ that no batch records waits before it is put back in the inbox (intake-recovery.ts). */
  get unrecordedFileMs(): number {
    return this.options.unrecordedFileMs ?? UNRECORDED_FILE_MS;
  }

  /** Whether the worker of that name is alive now (its lease not expired). */
  async isAlive(name: string): Promise<boolean> {
    const now = this.clock.now();
    return (await this.store.workers()).some((w) => w.name === name && w.expires_at > now);
  }

  get serviceConcurrency(): number {
    return this.options.serviceConcurrency;
  }

  /** Joins the workers under `name`; refused while a live process holds that name. */
  static async join(store: SharedWorkStore, clock: Clock, options: SharedWorkOptions): Promise<SharedWork> {
    const host = hostname();
    const now = clock.now();
    const me: WorkerRecord = { name: options.name, token: randomUUID(), host, pid: process.pid, started_at: now, renewed_at: now, expires_at: now + options.leaseMs };
    const isAlive = (other: WorkerRecord): boolean => other.host !== host || processAlive(other.pid);
    const other = await store.joinWorkers(me, isAlive);
    if (other) {
      const where = other.host === host ? `process ${other.pid}` : `process ${other.pid} on ${other.host}`;
      throw new PaybatchError(`a worker named ${options.name} is already running (${where}, since ${new Date(other.started_at).toISOString()}); give this one another name (PAYBATCH_WORKER or store.worker), or stop that one`, ExitCode.failure);
    }
    const work = new SharedWork(store, clock, me, options);
    work.keepAlive();
    await work.countLive();
    return work;
  }

  /** When the lease was last renewed (ms, this process's clock). */
  private renewedAt = 0;

  /**
   * The lease is renewed three times per lease. The worker stops itself once
   * two thirds of a lease have passed without a renewal (a database it cannot
   * reach, a renewal that hangs, a process that was paused): a third of a lease
   * before any other worker may take over what it holds. A renewal refused (the
   * lease expired, or another process took the name) stops it at once.
   */
  private keepAlive(): void {
    this.renewedAt = this.me.renewed_at;
    this.timer = setInterval(() => {
      const now = this.clock.now();
      if (!this.leaseHeld()) {
        this.lostWith(`the worker lease was not renewed for ${Math.round((now - this.renewedAt) / 1000)} s (the database did not answer, or this process was paused); other workers take its rows over`);
        return;
      }
      this.store.renewWorker(this.me.name, this.me.token, now, now + this.options.leaseMs).then(
        (held) => {
          if (!held) {
            this.lostWith(`the lease of worker ${this.me.name} expired or was taken over by another process`);
            return;
          }
          this.renewedAt = Math.max(this.renewedAt, now);
          return this.countLive();
        },
        () => {},
      ).catch(() => {});
    }, Math.max(1_000, Math.floor(this.options.leaseMs / 3)));
    this.timer.unref();
  }

  /** Whether this worker may still act: its lease renewed within two thirds of a lease. */
  leaseHeld(): boolean {
    return this.clock.now() - this.renewedAt < (this.options.leaseMs * 2) / 3;
  }

  private async countLive(): Promise<void> {
    const now = this.clock.now();
    this.liveCount = Math.max(1, (await this.store.workers()).filter((w) => w.expires_at > now).length);
  }

  /** Workers alive at the last renewal (at least this one): the polling budget is shared among them. */
  get liveWorkers(): number {
    return this.liveCount;
  }

  async leave(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.keptTimer) clearTimeout(this.keptTimer);
    this.keptTimer = null;
    // No call starts once it has left (its slots are freed with its lease).
    this.renewedAt = -Infinity;
    this.keptSlots.splice(0);
    await this.store.leaveWorkers(this.me.name, this.me.token).catch(() => {});
  }

  /** The row as it stands under this worker's claim; null while another live worker holds it. */
  claimRow(row: Pick<PipelineRow, 'batch_id' | 'line'>): Promise<PipelineRow | null> {
    return this.store.claimRow(row.batch_id, row.line, this.me.name, this.clock.now());
  }

  releaseRow(row: Pick<PipelineRow, 'batch_id' | 'line'>): Promise<void> {
    return this.store.releaseRow(row.batch_id, row.line, this.me.name);
  }

  claimReadyRows(batchId: string, limit: number): Promise<PipelineRow[]> {
    return this.store.claimReadyRows(batchId, this.me.name, this.clock.now(), limit);
  }

  claimDueReads(limit: number): Promise<PipelineRow[]> {
    return this.store.claimDueReads(this.me.name, this.clock.now(), limit);
  }

  claimWebhookEvents(limit: number): Promise<WebhookEvent[]> {
    return this.store.claimWebhookEvents(this.me.name, this.clock.now(), limit);
  }

  /**
   * Runs `work` holding one of the service's call slots, waiting for one to be
   * free. Null (nothing run) when `signal` aborts while waiting.
   */
  async withCallSlot<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T | null> {
    let taken: TakenSlot | null = null;
    for (let wait = 2; taken === null; wait = Math.min(SLOT_WAIT_MAX_MS, wait * 2)) {
      if (signal.aborted) return null;
      // The fence: no call starts once the lease may have passed to others (the worker is stopping).
      if (!this.leaseHeld()) return null;
      // One kept from a step that ended here, if any: no look in the database.
      taken = this.keptSlots.pop() ?? null;
      if (taken !== null) break;
      await this.returnUnreturned();
      const mark = Math.max(this.clock.now(), this.lastMark + 1);
      this.lastMark = mark;
      const slot = await this.store.takeCallSlot(this.me.name, this.options.serviceConcurrency, mark);
      if (slot !== null) taken = { slot, mark };
      else await new Promise((resolve) => setTimeout(resolve, wait + Math.floor(Math.random() * wait)));
    }
    this.slotsHeld.add(taken.slot);
    try {
      if (!this.leaseHeld()) return null;
      return await work();
    } finally {
      this.keep(taken);
    }
  }

  /**
   * A slot whose step ended: kept for the next step here, unless it was taken SLOT_REUSE_MS ago or more (then given
   * back now); every slot still kept SLOT_KEPT_MS later is given back.
   */
  private keep(taken: TakenSlot): void {
    if (this.clock.now() - taken.mark >= SLOT_REUSE_MS || !this.leaseHeld()) {
      void this.giveBack(taken);
      return;
    }
    this.keptSlots.push(taken);
    if (this.keptTimer) return;
    this.keptTimer = setTimeout(() => void this.giveBackKept(), SLOT_KEPT_MS);
    this.keptTimer.unref();
  }

  /** Gives back every slot kept and not taken again since (a return that fails is made again before the next take). */
  async giveBackKept(): Promise<void> {
    if (this.keptTimer) clearTimeout(this.keptTimer);
    this.keptTimer = null;
    await Promise.all(this.keptSlots.splice(0).map((taken) => this.giveBack(taken)));
  }

  /** No step holds the slot from now; kept out of the sweep until its return is answered (it may be taken again meanwhile). */
  private async giveBack(taken: TakenSlot): Promise<void> {
    this.slotsHeld.delete(taken.slot);
    this.givingBack.set(taken.slot, (this.givingBack.get(taken.slot) ?? 0) + 1);
    try {
      await this.returnSlot(taken.slot, taken.mark);
    } finally {
      const left = (this.givingBack.get(taken.slot) ?? 1) - 1;
      if (left > 0) this.givingBack.set(taken.slot, left);
      else this.givingBack.delete(taken.slot);
    }
  }

  private async returnSlot(slot: number, mark: number): Promise<void> {
    try {
      await this.store.returnCallSlot(slot, this.me.name, mark);
      if (this.unreturned.get(slot) === mark) this.unreturned.delete(slot);
    } catch {
      this.unreturned.set(slot, mark);
    }
  }

  /** The slots whose return failed, returned again: one pass at a time, however many calls wait. */
  private returnUnreturned(): Promise<void> {
    if (this.unreturned.size === 0) return Promise.resolve();
    this.returning ??= (async () => {
      for (const [slot, mark] of [...this.unreturned]) await this.returnSlot(slot, mark);
    })().finally(() => (this.returning = null));
    return this.returning;
  }

  /**
   * What this worker holds without using it (a release or a return that failed,
   * rows claimed and left) is freed once it is older than `idleMs`; `working`
   * are the rows with a step under way here ("batch:line").
   */
  async sweepIdle(working: readonly string[], idleMs: number): Promise<{ rows: number; slots: number }> {
    // The slots to return again are returned by that, not here: a slot freed here could be taken again by this
    // worker, and a late return would then free it in use.
    return this.store.sweepOwnClaims(this.me.name, this.clock.now() - idleMs, working, [...this.slotsHeld, ...this.givingBack.keys(), ...this.unreturned.keys()]);
  }

  /** What this worker holds now, for /healthz. */
  async held(): Promise<{ worker: string; rows: number; call_slots: number; live_workers: number }> {
    const held = await this.store.heldBy(this.me.name);
    return { worker: this.me.name, rows: held.rows, call_slots: held.slots, live_workers: this.liveCount };
  }
}
