import { describe, expect, it } from 'vitest';
import { bucketsFor, intervalMs, LATEST_SEND_MS, MemoryBuckets, WINDOW_GUARD_MS } from '../../src/api/rate-bucket.js';
import { RateLimiter } from '../../src/api/rate-limiter.js';
import { ManualClock } from '../../src/clock.js';

/** Reserves turns for calls back to back over `ms` of the clock, each sent at its turn plus `late` ms; the send times. */
function sendFor(buckets: MemoryBuckets, clock: ManualClock, wanted: ReturnType<typeof bucketsFor>, ms: number, late = 0): number[] {
  const sent: number[] = [];
  const end = clock.now() + ms;
  while (clock.now() < end) {
    const at = buckets.reserve(wanted, clock.now());
    clock.advance(at - clock.now() + late);
    sent.push(clock.now());
  }
  return sent;
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
    const taken = sendFor(buckets, clock, wanted, 10_000);
    expect(mostInAnyWindow(taken, 1000)).toBe(20);
    // The guard costs 2%: 20 a second less 2%, over ten seconds.
    expect(taken.length).toBeGreaterThanOrEqual(Math.floor((10_000 / (1000 + WINDOW_GUARD_MS)) * 20));
    expect(taken.length / 10 / 20).toBeGreaterThanOrEqual(0.97);
  });

  it('a call sent up to LATEST_SEND_MS after its turn still leaves no window of 1 s less the rest of the guard over the limit', () => {
    const clock = new ManualClock();
    const buckets = new MemoryBuckets();
    const wanted = bucketsFor({ overall: { requests: 20, per: 'second' } }, null);
    // Every other call late by the most allowed: the worst case for the calls after it.
    const sent: number[] = [];
    for (let i = 0; i < 200; i++) {
      const at = buckets.reserve(wanted, clock.now());
      clock.advance(at - clock.now());
      sent.push(clock.now() + (i % 2 === 0 ? LATEST_SEND_MS : 0));
    }
    expect(mostInAnyWindow(sent, 1000 + WINDOW_GUARD_MS - LATEST_SEND_MS)).toBe(20);
  });

  it('takes from the overall and the endpoint bucket together, or from neither', () => {
    const clock = new ManualClock();
    const buckets = new MemoryBuckets();
    const limits = { overall: { requests: 10, per: 'second' as const }, create: { requests: 2, per: 'second' as const } };
    const start = clock.now();
    expect(buckets.reserve(bucketsFor(limits, 'create'), start)).toBe(start);
    // The create bucket's next turn is an interval on; a second create gets it, and the overall bucket's too.
    expect(buckets.reserve(bucketsFor(limits, 'create'), start + 200)).toBeCloseTo(start + intervalMs(limits.create), 6);
    // So a read, which needs only the overall bucket, comes an overall interval after that create's turn.
    expect(buckets.reserve(bucketsFor(limits, 'read'), start + 200)).toBeCloseTo(start + intervalMs(limits.create) + intervalMs(limits.overall), 6);
    // ... and the next create, a create interval after the last create's.
    expect(buckets.reserve(bucketsFor(limits, 'create'), start + 200)).toBeCloseTo(start + 2 * intervalMs(limits.create), 6);
  });

  it('spaces a per-minute limit over the minute', () => {
    const clock = new ManualClock();
    const buckets = new MemoryBuckets();
    const wanted = bucketsFor({ fund: { requests: 30, per: 'minute' } }, 'fund');
    const taken = sendFor(buckets, clock, wanted, 180_000);
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
  it('waits for the turn it reserved, on the clock it is given', async () => {
    const clock = new ManualClock();
    const buckets = new MemoryBuckets();
    const slept: number[] = [];
    const limiter = new RateLimiter({ create: { requests: 10, per: 'second' } }, (b, now) => Promise.resolve(buckets.reserve(b, now)), clock, (ms) => {
      slept.push(ms);
      clock.advance(ms);
      return Promise.resolve();
    });
    for (let i = 0; i < 3; i++) await limiter.take('create');
    expect(slept).toEqual([102, 102]);
  });

  it('gives a turn up when woken too late, and sends at a later one', async () => {
    const clock = new ManualClock();
    const buckets = new MemoryBuckets();
    const turns: number[] = [];
    const limiter = new RateLimiter({ read: { requests: 10, per: 'second' } }, (b, now) => {
      const at = buckets.reserve(b, now);
      turns.push(at);
      return Promise.resolve(at);
    }, clock, (ms) => {
      // The first wait overshoots by 30 ms (a busy event loop); the next is on time.
      clock.advance(ms + (turns.length === 2 ? 30 : 0));
      return Promise.resolve();
    });
    const start = clock.now();
    await limiter.take('read');
    await limiter.take('read');
    expect(turns).toEqual([start, start + 102, start + 204]);
    expect(clock.now()).toBe(start + 204);
  });

  it('spaces turns by the configured margin, and gives up one woken later than half of it', async () => {
    const clock = new ManualClock();
    const buckets = new MemoryBuckets();
    const turns: number[] = [];
    // The second turn is woken 50 ms late (half the margin: sent), the third 51 ms late (given up), the fourth on time.
    const lateness = [0, 0, 50, 51, 0];
    const limiter = new RateLimiter({ create: { requests: 10, per: 'second' } }, (b, now) => {
      const at = buckets.reserve(b, now);
      turns.push(at);
      return Promise.resolve(at);
    }, clock, (ms) => {
      clock.advance(ms + (lateness[turns.length] ?? 0));
      return Promise.resolve();
    }, 100);
    const start = clock.now();
    for (let i = 0; i < 3; i++) await limiter.take('create');
    expect(turns).toEqual([start, start + 110, start + 220, start + 330]);
    expect(clock.now()).toBe(start + 330);
  });

  it('ends a wait when stopped, having taken nothing', async () => {
    const clock = new ManualClock();
    const buckets = new MemoryBuckets();
    const stop = new AbortController();
    const limiter = new RateLimiter({ overall: { requests: 1, per: 'minute' } }, (b, now) => Promise.resolve(buckets.reserve(b, now)), clock, () => {
      stop.abort();
      return Promise.resolve();
    });
    await limiter.take(null);
    await expect(limiter.take(null, stop.signal)).rejects.toThrow(/stopped while waiting/);
  });
});
