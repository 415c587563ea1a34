/**
 * Exponential backoff with full jitter: the wait before attempt n (1-based) is
 * drawn uniformly from [0, min(cap, base * 2^(n-1))]. Pure: the random draw is
 * passed in, so tests can fix it.
 */
export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
  /** Attempts in all, the first one included. */
  attempts: number;
}

export function backoffDelay(policy: BackoffPolicy, attempt: number, random: () => number): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}
