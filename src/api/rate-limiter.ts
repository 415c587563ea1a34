/**
 * What the client waits on before each request it sends, retries included,
 * when service.rate_limits names a limit: a token from each bucket the call
 * takes (rate-bucket.ts), from the process's own buckets (SQLite, one worker)
 * or from the database's, shared by every worker (PostgreSQL,
 * store/queries/rate-buckets.ts). A Retry-After the service asks for is waited
 * on before this, by the client: both are obeyed.
 *
 * A call reserves its turn and sleeps until it comes; one woken too late
 * reserves again (rate-bucket.ts latestSendMs).
 */
import type { Clock } from '../clock.js';
import type { Bucket, RateEndpoint, RateLimits } from './rate-bucket.js';
import { anyLimit, bucketsFor, latestSendMs, MemoryBuckets, WINDOW_GUARD_MS } from './rate-bucket.js';
import { systemClock } from '../clock.js';

/** Reserves a token of every bucket (rate-bucket.ts reservedAt): returns the time, on the clock given, they are the caller's. */
export type TokenSource = (buckets: readonly Bucket[], now: number) => Promise<number>;

export function memoryTokens(): TokenSource {
  const buckets = new MemoryBuckets();
  return (wanted, now) => Promise.resolve(buckets.reserve(wanted, now));
}

/** The longest a stop waits for a call waiting its turn to see it. */
const STOP_CHECK_MS = 1000;

const systemSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Ended early by a stop: nothing was sent. */
export class RateWaitStopped extends Error {}

export class RateLimiter {
  constructor(
    private readonly limits: RateLimits,
    private readonly tokens: TokenSource,
    private readonly clock: Clock,
    private readonly sleep: (ms: number) => Promise<void>,
    /** service.rate_limits.margin_ms (rate-bucket.ts). */
    private readonly marginMs = WINDOW_GUARD_MS,
  ) {}

  /** Resolves at the call's turn, when it is sent; throws RateWaitStopped when `signal` fires first. */
  async take(endpoint: RateEndpoint | null, signal?: AbortSignal): Promise<void> {
    const buckets = bucketsFor(this.limits, endpoint, this.marginMs);
    if (buckets.length === 0) return;
    for (;;) {
      if (signal?.aborted) throw new RateWaitStopped('stopped while waiting for the configured request rate');
      const at = await this.tokens(buckets, this.clock.now());
      // In steps of at most a second, the stop looked at after each: a listener on the stop's signal per waiting call
      // would be as many listeners as calls waiting.
      for (let wait = at - this.clock.now(); wait > 0; wait = at - this.clock.now()) {
        await this.sleep(Math.ceil(Math.min(wait, STOP_CHECK_MS)));
        if (signal?.aborted) throw new RateWaitStopped('stopped while waiting for the configured request rate');
      }
      // Woken too late (a busy event loop, a slow database): the turn is given up, never used late (rate-bucket.ts).
      if (this.clock.now() - at <= latestSendMs(this.marginMs)) return;
    }
  }
}

/**
 * The limiter for service.rate_limits, or none when no limit is set. The service counts its windows in real seconds:
 * it reads the system clock, whatever clock the engine is given. `tokens`: the shared database's buckets with several
 * workers; absent, this process's own.
 */
export function configuredRateLimiter(limits: RateLimits & { margin_ms?: number }, tokens?: TokenSource): RateLimiter | undefined {
  const { margin_ms: marginMs, ...rates } = limits;
  return anyLimit(rates) ? new RateLimiter(rates, tokens ?? memoryTokens(), systemClock, systemSleep, marginMs) : undefined;
}
