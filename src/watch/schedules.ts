/**
 * The daemon's schedules: cron expressions read in a time zone (src/cron.ts),
 * checked against an injected clock, so tests need not wait for
 * 2 a.m. When each schedule last ran is kept in the store: a run missed while
 * the daemon was down happens once at start, however many were missed.
 */
import type { Clock } from '../clock.js';
import type { ScheduleSpec } from '../cron.js';
import { nextRunAfter } from '../cron.js';
import type { ScheduleStore } from '../store/port.js';

export class Schedules {
  private readonly next = new Map<string, number | null>();
  /** The last run as recorded in the store when last looked at: the expected value of the next claim. */
  private readonly last = new Map<string, number>();

  constructor(
    private readonly specs: Readonly<Record<string, ScheduleSpec | undefined>>,
    private readonly store: ScheduleStore,
    private readonly clock: Clock,
  ) {}

  /** Names of the schedules in use. */
  get names(): string[] {
    return Object.keys(this.specs).filter((name) => this.specs[name] !== undefined);
  }

  /**
   * Works out each schedule's next run. The first start ever counts from now; a
   * later start counts from the last run, so a run missed meanwhile is due at once.
   */
  async start(): Promise<void> {
    const now = this.clock.now();
    for (const name of this.names) {
      // The first start ever records now; a worker starting beside it at the same moment reads what it recorded.
      if ((await this.store.lastScheduleRun(name)) === null) await this.store.claimScheduleRun(name, null, now);
      await this.reload(name);
    }
  }

  private async reload(name: string): Promise<void> {
    const last = (await this.store.lastScheduleRun(name)) ?? this.clock.now();
    this.last.set(name, last);
    this.next.set(name, nextRunAfter(this.specs[name] as ScheduleSpec, last));
  }

  /** When each schedule runs next (ms since the epoch), for people. */
  upcoming(): Record<string, number | null> {
    return Object.fromEntries(this.names.map((name) => [name, this.next.get(name) ?? null]));
  }

  /**
   * The schedules due now that this process is to run. Each is claimed first:
   * of several workers on one database, the one whose claim lands runs it, the
   * others learn of the run and wait for the next time.
   */
  async due(): Promise<string[]> {
    const now = this.clock.now();
    const due: string[] = [];
    for (const name of this.names) {
      const at = this.next.get(name);
      if (at === undefined || at === null || at > now) continue;
      if (await this.store.claimScheduleRun(name, this.last.get(name) ?? null, now)) due.push(name);
      await this.reload(name);
    }
    return due;
  }
}
