/**
 * The configured request rates (service.rate_limits) as token buckets, pure.
 *
 * Each limit is a bucket holding at most ONE token, refilled every
 * `(window + margin) / requests` ms: a call takes a token from the
 * overall bucket and from its endpoint's, both at once or neither. A bucket
 * that held more than one token would let a burst and the next window's
 * refills meet in one window, over the limit; with one, calls are spaced so
 * that no window of the limit's length ever holds more than `requests` of
 * them at the sender, and the margin (service.rate_limits.margin_ms, by
 * default WINDOW_GUARD_MS) leaves room for calls sent a little after their
 * turn (latestSendMs: half of it) and for calls reaching the service unevenly
 * (the other half: the jitter of the way there, and of the service's own
 * clock as it counts them). A bucket's
 * whole state is the time its token was last taken: a call reserves the next
 * turn of every bucket it needs (reservedAt), then waits for it.
 */

import type { Endpoint } from './calls.js';

/** The endpoints a limit may name; calls to any other (corridors, webhooks) count to `overall` only. */
export const RATE_ENDPOINTS = ['create', 'fund', 'read', 'lookup', 'cancel'] as const;
export type RateEndpoint = (typeof RATE_ENDPOINTS)[number];

const NAMED: Partial<Record<Endpoint, RateEndpoint>> = {
  'POST /transactions': 'create',
  'POST /transactions/:id/fund': 'fund',
  'GET /transactions/:id': 'read',
  'GET /transactions': 'lookup',
  'DELETE /transactions/:id': 'cancel',
};

/** The name a limit gives the client's endpoint; null for one no limit names. */
export function rateEndpoint(endpoint: Endpoint): RateEndpoint | null {
  return NAMED[endpoint] ?? null;
}

export interface RateLimit {
  requests: number;
  per: 'second' | 'minute';
}

export type RateLimits = Partial<Record<RateEndpoint | 'overall', RateLimit>>;

export interface Bucket {
  /** `overall` or an endpoint's name: the row of the shared table on PostgreSQL. */
  name: string;
  intervalMs: number;
}

/** The margin added to each window before it is divided among its requests (see above), unless configured: 2% of a second. */
export const WINDOW_GUARD_MS = 20;

const WINDOW_MS = { second: 1000, minute: 60_000 } as const;

export function intervalMs(limit: RateLimit, marginMs = WINDOW_GUARD_MS): number {
  return (WINDOW_MS[limit.per] + marginMs) / limit.requests;
}

/** The buckets a call to `endpoint` takes a token from (none when nothing is limited); `null` is an endpoint no limit names. */
export function bucketsFor(limits: RateLimits, endpoint: RateEndpoint | null, marginMs = WINDOW_GUARD_MS): Bucket[] {
  const names: (RateEndpoint | 'overall')[] = endpoint === null ? ['overall'] : ['overall', endpoint];
  return names.flatMap((name) => {
    const limit = limits[name];
    return limit ? [{ name, intervalMs: intervalMs(limit, marginMs) }] : [];
  });
}

export function anyLimit(limits: RateLimits): boolean {
  return Object.values(limits).some((limit) => limit !== undefined);
}

/** When every one of `buckets` has its token again, given when each was last taken (absent: never, so it is full). */
export function freeAt(lastTaken: (name: string) => number | undefined, buckets: readonly Bucket[]): number {
  let at = -Infinity;
  for (const bucket of buckets) {
    const last = lastTaken(bucket.name);
    if (last !== undefined) at = Math.max(at, last + bucket.intervalMs);
  }
  return at;
}

/**
 * The time a call asking at `now` is given its tokens: the first moment every bucket has one again, never before
 * `now`. The tokens are taken for that moment at once (each bucket's last-taken time becomes it): a call reserves its
 * turn and waits for it, and the next caller's turn is one interval after, however late the first is woken.
 */
export function reservedAt(lastTaken: (name: string) => number | undefined, buckets: readonly Bucket[], now: number): number {
  return Math.max(now, freeAt(lastTaken, buckets));
}

/**
 * How late past its turn a call may still be sent. One woken later (a busy event loop) gives its turn up and reserves
 * another: sent late, it would come closer than an interval to the turns after it. Half the margin, the other half
 * left for calls reaching the service unevenly.
 */
export function latestSendMs(marginMs = WINDOW_GUARD_MS): number {
  return marginMs / 2;
}

/** latestSendMs of the default margin. */
export const LATEST_SEND_MS = latestSendMs();

/** The in-process buckets (SQLite: one worker): when each token was last taken. */
export class MemoryBuckets {
  private readonly last = new Map<string, number>();

  /** Reserves a token of every bucket: returns the time they are the caller's (see reservedAt). */
  reserve(buckets: readonly Bucket[], now: number): number {
    const at = reservedAt((name) => this.last.get(name), buckets, now);
    for (const bucket of buckets) this.last.set(bucket.name, at);
    return at;
  }
}
