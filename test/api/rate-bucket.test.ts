import { describe, expect, it } from 'vitest';
import { bucketsFor, intervalMs, MemoryBuckets, WINDOW_GUARD_MS } from '../../src/api/rate-bucket.js';
import { RateLimiter } from '../../src/api/rate-limiter.js';
import { ManualClock } from '../../src/clock.js';

/** Takes tokens for `endpoint` as fast as the buckets allow over `ms` of the clock, one ms at a time; the times taken. */
function takeFor(buckets: MemoryBuckets, clock: ManualClock, wanted: ReturnType<typeof bucketsFor>, ms: number): number[] {
  const taken: number[] = [];
  const end = clock.now() + ms;
  while (clock.now() < end) {
    if (buckets.take(wanted, clock.now()) === 0) taken.push(clock.now());
    else clock.advance(1);
  }
  return taken;
}

/** The most times in any window [t, t + windowMs), over every start t. */
function mostInAnyWindow(times: readonly number[], windowMs: number): number {
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while ((times[j] as number) <= (times[i] as number) - windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

describe('the request-rate token bucket', () => {
  it('never lets a one-second window hold more than the limit, and gives close to the limit', () => {
    const clock = new ManualClock();
    const buckets = new MemoryBuckets();
    const wanted = bucketsFor({ overall: { requests: 20, per: 'second' } }, 'create');
    const taken = takeFor(buckets, clock, wanted, 10_000);
    expect(mostInAnyWindow(taken, 1000)).toBe(20);
    // The guard costs 2%: 20 a second less 2%, over ten seconds.
    expect(taken.length).toBeGreaterThanOrEqual(Math.floor((10_000 / (1000 + WINDOW_GUARD_MS)) * 20));
    expect(taken.length / 10 / 20).toBeGreaterThanOrEqual(0.97);
  });

  it('takes from the overall and the endpoint bucket together, or from neither', () => {
    const clock = new ManualClock();
    const buckets = new MemoryBuckets();
    const limits = { overall: { requests: 10, per: 'second' as const }, create: { requests: 2, per: 'second' as const } };
    expect(buckets.take(bucketsFor(limits, 'create'), clock.now())).toBe(0);
    // The create bucket is empty: a second create waits for it, and takes nothing from the overall one meanwhile.
    const wait = buckets.take(bucketsFor(limits, 'create'), clock.now() + 200);
    expect(wait).toBeCloseTo(intervalMs(limits.create) - 200, 6);
    // Overall's own interval (102 ms) has passed: a read goes at once.
    clock.advance(200);
    expect(buckets.take(bucketsFor(limits, 'read'), clock.now())).toBe(0);
    // ... and the next create waits for the later of the two buckets.
    expect(buckets.take(bucketsFor(limits, 'create'), clock.now())).toBeCloseTo(intervalMs(limits.create) - 200, 6);
  });

  it('spaces a per-minute limit over the minute', () => {
    const clock = new ManualClock();
    const buckets = new MemoryBuckets();
    const wanted = bucketsFor({ fund: { requests: 30, per: 'minute' } }, 'fund');
    const taken = takeFor(buckets, clock, wanted, 180_000);
    expect(mostInAnyWindow(taken, 60_000)).toBe(30);
    expect(taken.length).toBeGreaterThanOrEqual(88);
  });

  it('limits nothing that no limit names', () => {
    expect(bucketsFor({ create: { requests: 5, per: 'second' } }, 'read')).toEqual([]);
    expect(bucketsFor({ create: { requests: 5, per: 'second' } }, null)).toEqual([]);
    expect(bucketsFor({ overall: { requests: 5, per: 'second' } }, null).map((b) => b.name)).toEqual(['overall']);
  });
});

describe('the rate limiter', () => {
  it('waits the time the buckets name, on the clock it is given, and serves one endpoint in order', async () => {
    const clock = new ManualClock();
    const buckets = new MemoryBuckets();
    const slept: number[] = [];
    const limiter = new RateLimiter({ create: { requests: 10, per: 'second' } }, (b, now) => Promise.resolve(buckets.take(b, now)), clock, (ms) => {
      slept.push(ms);
      clock.advance(ms);
      return Promise.resolve();
    });
    const order: number[] = [];
    await Promise.all([0, 1, 2].map((n) => limiter.take('create').then(() => order.push(n))));
    expect(order).toEqual([0, 1, 2]);
    expect(slept).toEqual([102, 102]);
  });

  it('ends a wait when stopped, having taken nothing', async () => {
    const clock = new ManualClock();
    const buckets = new MemoryBuckets();
    const stop = new AbortController();
    const limiter = new RateLimiter({ overall: { requests: 1, per: 'minute' } }, (b, now) => Promise.resolve(buckets.take(b, now)), clock, () => {
      stop.abort();
      return Promise.resolve();
    });
    await limiter.take(null);
    await expect(limiter.take(null, stop.signal)).rejects.toThrow(/stopped while waiting/);
  });
});
