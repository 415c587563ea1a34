/**
 * Injected faults: what a real service does on a bad night. Each is a rate or a
 * range, drawn from the seeded random source so a run can be replayed.
 */
import type { FaultConfig } from './config.js';
import type { Random } from './random.js';

export interface FaultDecision {
  delayMs: number;
  /** An answer given instead of processing the request. */
  refusal: 429 | 500 | 503 | null;
  /** With a latency: the request takes effect only once it has passed, not as it arrives. */
  late: boolean;
}

/** Drawn before a request is processed: a latency spike and/or a refusal. */
export function drawFault(faults: FaultConfig, random: Random): FaultDecision {
  const delayMs = random.chance(faults.latency.rate) ? random.between(faults.latency.min_ms, faults.latency.max_ms) : 0;
  let refusal: FaultDecision['refusal'] = null;
  if (random.chance(faults.http_429_rate)) refusal = 429;
  else if (random.chance(faults.http_500_rate)) refusal = 500;
  else if (random.chance(faults.http_503_rate)) refusal = 503;
  // Drawn last, and only for a request with a latency: sequences drawn without it stay as they were.
  const late = delayMs > 0 && random.chance(faults.late_commit_rate);
  return { delayMs, refusal, late };
}

/** Drawn after a create or fund took effect: drop the connection instead of answering. */
export function drawResetAfterCommit(faults: FaultConfig, operation: 'create' | 'fund', random: Random): boolean {
  return random.chance(faults.reset_after_commit[operation]);
}
