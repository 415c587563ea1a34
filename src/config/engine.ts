/**
 * The `engine` key of the configuration: how paybatch sends and follows payouts
 * (calls in flight, the most a row or a batch may cost, the funding deadline,
 * the loop's round and the polling budget).
 */
import { z } from 'zod';

const positive = z.number().int().positive();

const money = z.string().regex(/^\d{1,18}$/, 'minor units as an integer string');

export const engineSchema = z.strictObject({
  /** Calls to the service in flight at once (per worker). */
  concurrency: positive.max(256).default(8),
  /**
   * With several workers on PostgreSQL: calls in flight at once across all of them
   * (the service's limits are per client, not per machine). Default: concurrency.
   */
  service_concurrency: positive.max(1024).optional(),
  /** [4] The client checks the computed input amount before funding: the most one row may cost, per input currency, in minor units. */
  max_input_per_row: z.record(z.string(), money).default({}),
  /** The most one batch may cost, per input currency, in minor units. */
  batch_budget: z.record(z.string(), money).default({}),
  /** Fund within this long after creation, inside the service's one hour [8]; later, the row is sender_not_approved. */
  funding_deadline_ms: positive.default(50 * 60 * 1000),
  /**
   * How long `run` and `watch` wait between rounds of their loop: a round makes the reads that are due, retries
   * stalled steps and settles a batch whose payouts have all ended. Shorter: a batch is seen to end sooner, for more
   * small queries of the database; the reads per second stay within engine.polling.reads_per_second either way.
   */
  loop_ms: z.number().int().min(10).max(60_000).default(1_000),
  /** [D17] The polling budget: reads of one transaction in its first window, then one per later interval. */
  polling: z.strictObject({
    first_window_ms: positive.default(3_600_000),
    first_window_reads: positive.default(6),
    later_interval_ms: positive.default(3_600_000),
    /** All reads together, per second. */
    reads_per_second: positive.default(5),
  }).default(() => ({ first_window_ms: 3_600_000, first_window_reads: 6, later_interval_ms: 3_600_000, reads_per_second: 5 })),
});
