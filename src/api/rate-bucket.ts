/**
 * The configured request rates (service.rate_limits) as token buckets, pure.
 *
 * Each limit is a bucket holding at most ONE token, refilled every
 * `(window + WINDOW_GUARD_MS) / requests` ms: a call takes a token from the
 * overall bucket and from its endpoint's, both at once or neither. A bucket
 * that held more than one token would let a burst and the next window's
 * refills meet in one window, over the limit; with one, calls are spaced so
 * that no window of the limit's length ever holds more than `requests` of
 * them at the sender, and the guard leaves room for calls that reach the
 * service a little closer together than they left (timers firing late,
 * connections answering unevenly). A bucket's whole state is the time its
 * token was last taken.
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

/** Added to each window before it is divided among its requests (see above): 2% of a second. */
export const WINDOW_GUARD_MS = 20;

const WINDOW_MS = { second: 1000, minute: 60_000 } as const;

export function intervalMs(limit: RateLimit): number {
  return (WINDOW_MS[limit.per] + WINDOW_GUARD_MS) / limit.requests;
}

/** The buckets a call to `endpoint` takes a token from (none when nothing is limited); `null` is an endpoint no limit names. */
export function bucketsFor(limits: RateLimits, endpoint: RateEndpoint | null): Bucket[] {
  const names: (RateEndpoint | 'overall')[] = endpoint === null ? ['overall'] : ['overall', endpoint];
  return names.flatMap((name) => {
    const limit = limits[name];
    return limit ? [{ name, intervalMs: intervalMs(limit) }] : [];
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

/** Whether a call may go at `now`: `{ wait: 0 }` when every bucket has its token (the caller takes them all), else how long until they do. */
export function takeDecision(lastTaken: (name: string) => number | undefined, buckets: readonly Bucket[], now: number): { wait: number } {
  return { wait: Math.max(0, freeAt(lastTaken, buckets) - now) };
}

/** The in-process buckets (SQLite: one worker): when each token was last taken. */
export class MemoryBuckets {
  private readonly last = new Map<string, number>();

  /** Takes a token from every bucket, and returns 0; or takes none and returns the ms to wait. */
  take(buckets: readonly Bucket[], now: number): number {
    const { wait } = takeDecision((name) => this.last.get(name), buckets, now);
    if (wait > 0) return wait;
    for (const bucket of buckets) this.last.set(bucket.name, now);
    return 0;
  }
}
