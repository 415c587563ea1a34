/**
 * The `process` key of the configuration: how V8 sizes the heap of a paybatch
 * command, set once by the CLI as the command starts (src/cli/process-tuning.ts,
 * src/heap.ts says why each figure is what it is). The defaults are the measured
 * ones; they are settings for a machine that differs, not for everyday use.
 */
import { z } from 'zod';

export const processSchema = z.strictObject({
  /**
   * V8's young generation, both halves together, in MiB: grown to this at start and held there
   * (its growth held at 1). 0 leaves it to V8, which grows it to 32 MiB under garbage.
   */
  young_generation_mb: z.number().int().min(0).max(32).default(4),
  /** The same while rows are sent or a report is written (grown at each batch's sending and as a report starts, as far as V8 grows it); 0: not grown. */
  sending_young_generation_mb: z.number().int().min(0).max(32).default(8),
  /** The old generation grows by this percent of what is live after a collection; 0 leaves V8's own factor (up to four times). */
  heap_growing_percent: z.number().int().min(0).max(400).default(25),
  /** WebAssembly (the HTTP client's answer parser) compiled by V8's baseline compiler only, not a second time optimised. */
  wasm_baseline_only: z.boolean().default(true),
});

export type ProcessConfig = z.infer<typeof processSchema>;
