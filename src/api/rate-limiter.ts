/**
 * What the client waits on before each request it sends, retries included,
 * when service.rate_limits names a limit: a token from each bucket the call
 * takes (rate-bucket.ts), from the process's own buckets (SQLite, one worker)
 * or from the database's, shared by every worker (PostgreSQL,
 * store/queries/rate-buckets.ts). A Retry-After the service asks for is waited
 * on before this, by the client: both are obeyed.
 *
 * Calls to one endpoint queue in the order they came, so that only the first
 * of them asks the buckets (the database) at a time; calls to different
 * endpoints queue apart, a slow endpoint's limit never holding another's calls.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../clock.js';
import type { Bucket, RateEndpoint, RateLimits } from './rate-bucket.js';
import { anyLimit, bucketsFor, MemoryBuckets } from './rate-bucket.js';
import { systemClock } from '../clock.js';

/** Takes a token from every bucket and returns 0, or takes none and returns the ms until they all have one. */
export type TokenSource = (buckets: readonly Bucket[], now: number) => Promise<number>;

export function memoryTokens(): TokenSource {
  const buckets = new MemoryBuckets();
  return (wanted, now) => Promise.resolve(buckets.take(wanted, now));
}

/** Sleeps, ending early (its timer cleared) when the signal fires. */
export async function sleepUnlessStopped(ms: number, signal?: AbortSignal): Promise<void> {
  await delay(ms, undefined, { signal }).catch(() => {});
}

/** Ended early by a stop: nothing was sent. */
export class RateWaitStopped extends Error {}

export class RateLimiter {
  private readonly queues = new Map<string, Promise<void>>();

  constructor(
    private readonly limits: RateLimits,
    private readonly tokens: TokenSource,
    private readonly clock: Clock,
    private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
  ) {}

  /** Resolves once the call may be sent; throws RateWaitStopped when `signal` fires first. */
  async take(endpoint: RateEndpoint | null, signal?: AbortSignal): Promise<void> {
    const buckets = bucketsFor(this.limits, endpoint);
    if (buckets.length === 0) return;
    const key = endpoint ?? 'other';
    const before = this.queues.get(key) ?? Promise.resolve();
    const mine = before.then(() => this.acquire(buckets, signal));
    // The next in the queue waits for this one's turn to end, however it ended.
    const turn = mine.catch(() => {});
    this.queues.set(key, turn);
    try {
      await mine;
    } finally {
      if (this.queues.get(key) === turn) this.queues.delete(key);
    }
  }

  private async acquire(buckets: readonly Bucket[], signal: AbortSignal | undefined): Promise<void> {
    for (;;) {
      if (signal?.aborted) throw new RateWaitStopped('stopped while waiting for the configured request rate');
      const wait = await this.tokens(buckets, this.clock.now());
      if (wait <= 0) return;
      // At least a millisecond: a timer rounds down, and a token not yet back would be asked for again at once.
      await this.sleep(Math.max(1, Math.ceil(wait)), signal);
    }
  }
}

/**
 * The limiter for service.rate_limits, or none when no limit is set. The service counts its windows in real seconds:
 * it reads the system clock, whatever clock the engine is given. `tokens`: the shared database's buckets with several
 * workers; absent, this process's own.
 */
export function configuredRateLimiter(limits: RateLimits, tokens?: TokenSource): RateLimiter | undefined {
  return anyLimit(limits) ? new RateLimiter(limits, tokens ?? memoryTokens(), systemClock, sleepUnlessStopped) : undefined;
}
