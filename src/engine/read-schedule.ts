/**
 * When a transaction is read next, within the polling budget [D17]: at most
 * `first_window_reads` reads in the first window after creation, then one per
 * later interval. Webhooks are the primary source [1]; reads are the fallback.
 * Pure.
 */
import type { EngineConfig } from '../config/config.js';

export type PollingPolicy = EngineConfig['polling'];

export function firstInterval(polling: PollingPolicy): number {
  return Math.ceil(polling.first_window_ms / polling.first_window_reads);
}

/**
 * The next read of a row (ms since the epoch), counting the read just made when
 * `counted`. A read is never later than `deadline` when one is given (the
 * funding deadline of a row waiting on its sender's KYC): the row is decided on
 * in time.
 */
export function nextReadAt(row: { created_at: string | null; reads: number }, now: number, polling: PollingPolicy, counted: boolean, deadline?: number): number {
  const created = row.created_at ? Date.parse(row.created_at) : now;
  const reads = row.reads + (counted ? 1 : 0);
  const inFirstWindow = now < created + polling.first_window_ms && reads < polling.first_window_reads;
  const next = now + (inFirstWindow ? firstInterval(polling) : polling.later_interval_ms);
  return deadline !== undefined && deadline > now ? Math.min(next, deadline) : next;
}
