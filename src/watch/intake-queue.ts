/**
 * The daemon's files to take in, in arrival order, a few at once: one slow or
 * hostile file (a huge one, a spreadsheet that unpacks for long, a slow share)
 * holds one slot, never the files behind it. The claim by rename makes a second
 * take of one file impossible anyway; a file is also never queued twice.
 *
 * A file not complete yet is looked at again when it may be: at the time its
 * last look gave, or at once when it changes (a file left cut short in the middle
 * of a line, then completed, is not left for four stability intervals). One
 * timer a file: a new look replaces the time the last one set.
 */
import type { IntakeOutcome } from '../engine/intake.js';
import type { Seen } from '../workspace/arrival.js';

/** Files taken in at once: a small bound, each intake reading its file on its own checking threads. */
export const INTAKE_SLOTS = 3;

export interface IntakeQueueDeps {
  /** Takes the file in (or says it is not complete yet), `before` being what its last look saw. */
  take(file: string, before: Seen | undefined): Promise<IntakeOutcome>;
  /** Whether files may be taken now (false while the database is unhealthy, or once stopping). */
  open(): boolean;
  accepted(batch: string): void;
  failed(file: string, error: unknown): void;
  slots?: number;
}

export class IntakeQueue {
  private readonly queue: string[] = [];
  /** Queued or being taken. */
  private readonly queued = new Set<string>();
  /** Being taken now, and those of them that changed meanwhile (looked at again once this take ends). */
  private readonly taking = new Set<string>();
  private readonly changedWhileTaking = new Set<string>();
  /** What was seen of each file not complete yet at its last look: stability is measured from it. */
  private readonly sightings = new Map<string, Seen>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly deps: IntakeQueueDeps) {}

  add(file: string): void {
    if (this.stopped || !this.deps.open() || this.queued.has(file)) return;
    this.queued.add(file);
    this.queue.push(file);
    this.pump();
  }

  /** A file changed: looked at again now if it is one waiting to be complete; other files arrive by add(). */
  changed(file: string): void {
    if (this.taking.has(file)) this.changedWhileTaking.add(file);
    else if (this.sightings.has(file)) this.add(file);
  }

  /** Files being taken in now. */
  get busy(): number {
    return this.taking.size;
  }

  get length(): number {
    return this.queue.length;
  }

  /** No file is taken from now on, and no look is left scheduled (a take under way finishes by itself). */
  stop(): void {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private pump(): void {
    const slots = this.deps.slots ?? INTAKE_SLOTS;
    while (!this.stopped && this.taking.size < slots && this.queue.length > 0) {
      const file = this.queue.shift() as string;
      this.taking.add(file);
      void this.takeOne(file).finally(() => {
        this.taking.delete(file);
        this.queued.delete(file);
        if (this.changedWhileTaking.delete(file) && this.sightings.has(file)) this.add(file);
        this.pump();
      });
    }
  }

  private async takeOne(file: string): Promise<void> {
    clearTimeout(this.timers.get(file));
    this.timers.delete(file);
    try {
      const outcome = await this.deps.take(file, this.sightings.get(file));
      if (outcome.kind === 'waiting') {
        this.sightings.set(file, outcome.seen);
        this.lookAgainIn(file, outcome.retryInMs);
      } else {
        this.sightings.delete(file);
      }
      if (outcome.kind === 'accepted') this.deps.accepted(outcome.batch);
    } catch (error) {
      this.deps.failed(file, error);
    }
  }

  private lookAgainIn(file: string, ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timers.get(file));
    const timer = setTimeout(() => {
      this.timers.delete(file);
      this.add(file);
    }, Math.max(50, ms));
    this.timers.set(file, timer);
  }
}
