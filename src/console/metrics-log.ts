/**
 * The engine already says what /metrics counts, in its log: a tap on the log
 * counts those events, so that the engine needs no hook of its own. The log is
 * written first; counting never stops it.
 */
import type { PipelineLog } from '../engine/pipeline.js';
import type { Metrics } from './metrics.js';

type Counted = Pick<Metrics, 'finalState' | 'balanceExhausted' | 'answerMismatch' | 'batchSettled'>;

const COUNTERS: Readonly<Record<string, (metrics: Counted, fields: Record<string, unknown>) => void>> = {
  // A row reached a final state (engine/steps.ts): its state, how it was learned, the reads it took.
  settled: (m, f) => m.finalState(f.state, f.source, f.reads),
  balance_exhausted: (m, f) => m.balanceExhausted(f.currency),
  answer_mismatch: (m, f) => m.answerMismatch(f.asked_in),
  batch_settled: (m) => m.batchSettled(),
};

export function metricsLog(log: PipelineLog, metrics: Counted): PipelineLog {
  return (event, fields) => {
    log(event, fields);
    const count = COUNTERS[event];
    if (!count) return;
    try {
      count(metrics, fields);
    } catch {
      // A metric that cannot be counted is lost; the payout and its log are not.
    }
  };
}
