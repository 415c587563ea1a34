/**
 * A clock for the tests that must see the real sandbox's timing in the code's
 * time (the engine and daemon helpers give a ManualClock by default): the
 * system's time plus every step a test moved it on (`advance`). It never runs
 * behind the system's clock, so times a test takes from `Date.now()` (a signed
 * approval, a backdated claim) stay in order with it. A test that opts into it
 * says why in a comment.
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
