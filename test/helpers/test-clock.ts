/**
 * The clock the engine and daemon helpers give the code under test unless a
 * test brings its own: the system's time plus every step a test moved it on
 * (`advance`), to pass an approval's expiry, a polling window, a lease or a
 * schedule at once instead of waiting for it. It is not frozen, because those
 * tests run the real sandbox over real HTTP, whose payouts move on its own
 * timers: a ManualClock that stands still never lets a scheduled read fall due,
 * and one moved on by the engine's waits ran ahead of or behind the sandbox
 * (tried: a run's wait then ended before the sandbox had moved the rows it
 * waits for, or took far longer than asked on a busy machine). It never runs
 * behind the system's clock, so times a test takes from `Date.now()` (a
 * signed approval, a backdated claim) stay in order with it. A test that needs
 * time to stand still passes a ManualClock.
 */
import type { Clock } from '../../src/clock.js';

export class SteppedClock implements Clock {
  private ahead = 0;

  now(): number {
    return Date.now() + this.ahead;
  }

  /** Moves the clock on by `ms` at once. */
  advance(ms: number): void {
    if (ms < 0) throw new Error('a clock is not moved back');
    this.ahead += ms;
  }
}
