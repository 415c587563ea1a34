/**
 * How many random cases a property test tries. The default is enough to reach
 * every branch the generators aim at (each test asserts its coverage) and keeps
 * the unit tier fast; PAYBATCH_DEEP=1 runs the full count, for a change to the
 * code under test or a nightly run (docs/testing.md, "Deep runs").
 */
export const DEEP = process.env.PAYBATCH_DEEP === '1';

/** `full` runs in a deep run, a quarter of them (at least `floor`) otherwise. */
export function propertyRuns(full: number, floor = 1): number {
  return DEEP ? full : Math.max(floor, Math.ceil(full / 4));
}
