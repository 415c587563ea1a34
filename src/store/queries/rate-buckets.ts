/**
 * The request-rate buckets every worker shares on PostgreSQL (service.rate_limits,
 * see src/api/rate-bucket.ts for what a bucket is): one row per bucket, when
 * its one token was last taken. A call's tokens (overall and its endpoint's)
 * are reserved in one statement: the rows are locked in name order (no two
 * workers deadlock), the first time they all have their token again (never
 * before now) is computed from what is stored and written back into each, and
 * returned; so several workers never hold the same turn, and never more turns
 * together than the buckets give. The rule is the in-process buckets'
 * (reservedAt), in SQL. PostgreSQL only (arrays): SQLite's one worker keeps its
 * buckets in memory.
 */
import type { Bucket } from '../../api/rate-bucket.js';
import type { SqlConnection } from './connection.js';

/** The buckets' rows, made once per process for each set of names (a bucket never taken is full). */
export async function ensureBuckets(c: SqlConnection, names: readonly string[]): Promise<void> {
  await c.run('INSERT INTO rate_buckets (name, last_taken_ms) SELECT unnest(?::text[]), 0 ON CONFLICT (name) DO NOTHING', [[...names]]);
}

/** Reserves a token of every bucket: returns the time (ms since the epoch, never before `now`) they are the caller's. */
export async function reserveTokens(c: SqlConnection, buckets: readonly Bucket[], now: number): Promise<number> {
  const names = buckets.map((b) => b.name);
  const row = await c.first<{ at: number }>(`WITH wanted AS (SELECT unnest(?::text[]) AS name, unnest(?::float8[]) AS interval_ms),
      locked AS (SELECT b.last_taken_ms + w.interval_ms AS free_at FROM rate_buckets b JOIN wanted w ON w.name = b.name ORDER BY b.name FOR UPDATE OF b),
      turn AS (SELECT GREATEST(?::float8, COALESCE(MAX(free_at), 0)) AS at FROM locked),
      took AS (UPDATE rate_buckets SET last_taken_ms = turn.at FROM turn WHERE rate_buckets.name = ANY(?::text[]) RETURNING 1)
    SELECT turn.at AS at, (SELECT COUNT(*) FROM took)::int AS taken FROM turn`,
  [names, buckets.map((b) => b.intervalMs), now, names]);
  if (!row) throw new Error('the rate buckets answered nothing');
  return Number(row.at);
}

/** A token source (src/api/rate-limiter.ts) over the shared buckets. */
export function sharedTokens(c: SqlConnection): (buckets: readonly Bucket[], now: number) => Promise<number> {
  const made = new Set<string>();
  return async (buckets, now) => {
    const missing = buckets.map((b) => b.name).filter((name) => !made.has(name));
    if (missing.length > 0) {
      await ensureBuckets(c, missing);
      for (const name of missing) made.add(name);
    }
    return reserveTokens(c, buckets, now);
  };
}
