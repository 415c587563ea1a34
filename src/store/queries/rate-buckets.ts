/**
 * The request-rate buckets every worker shares on PostgreSQL (service.rate_limits,
 * see src/api/rate-bucket.ts for what a bucket is): one row per bucket, when
 * its one token was last taken. A call's tokens (overall and its endpoint's)
 * are taken in one statement, all or none: the rows are locked in name order
 * (no two workers deadlock), the time they all have their token again is
 * computed from what is stored, and they are taken only when that time has
 * come; so several workers never take more tokens together than the buckets
 * give. The rule is the same as the in-process buckets' (takeDecision), in SQL.
 * PostgreSQL only (arrays): SQLite's one worker keeps its buckets in memory.
 */
import type { Bucket } from '../../api/rate-bucket.js';
import type { SqlConnection } from './connection.js';

/** The buckets' rows, made once per process for each set of names (a bucket never taken is full). */
export async function ensureBuckets(c: SqlConnection, names: readonly string[]): Promise<void> {
  await c.run('INSERT INTO rate_buckets (name, last_taken_ms) SELECT unnest(?::text[]), 0 ON CONFLICT (name) DO NOTHING', [[...names]]);
}

/** Takes a token from every bucket at `now` and returns 0, or takes none and returns the ms until they all have one. */
export async function takeTokens(c: SqlConnection, buckets: readonly Bucket[], now: number): Promise<number> {
  const names = buckets.map((b) => b.name);
  const row = await c.first<{ free_at: number; taken: number }>(`WITH wanted AS (SELECT unnest(?::text[]) AS name, unnest(?::float8[]) AS interval_ms),
      locked AS (SELECT b.name, b.last_taken_ms + w.interval_ms AS free_at FROM rate_buckets b JOIN wanted w ON w.name = b.name ORDER BY b.name FOR UPDATE OF b),
      free AS (SELECT COALESCE(MAX(free_at), 0) AS free_at, COUNT(*) AS found FROM locked),
      took AS (UPDATE rate_buckets SET last_taken_ms = ?::float8 FROM free WHERE rate_buckets.name = ANY(?::text[]) AND free.free_at <= ?::float8 RETURNING 1)
    SELECT free.free_at AS free_at, (SELECT COUNT(*) FROM took)::int AS taken, free.found::int AS found FROM free`,
  [names, buckets.map((b) => b.intervalMs), now, names, now]);
  if (!row) throw new Error('the rate buckets answered nothing');
  if (row.taken > 0) return 0;
  return Math.max(1, Number(row.free_at) - now);
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
    return takeTokens(c, buckets, now);
  };
}
