/**
 * The figures of a run under service.rate_limits, as the sandbox counted them (bench:submit and bench:workers alike):
 * the most calls in a calendar second against the limit (the goal), the most in any one-second span (printed: what a
 * service with a sliding window would count), and the throughput against the limit (goal: at least 0.95).
 */
import type { WindowFigures } from '../src/sandbox/call-windows.js';

export function printRateFigures(w: WindowFigures, limit: number): boolean {
  const rate = (w.calls - 1) / (((w.last_at_ms as number) - (w.first_at_ms as number)) / 1000);
  const verdict = (met: boolean): string => (met ? 'met' : 'NOT MET');
  console.log(`    most calls in any 1 s window   ${String(w.max_in_window).padStart(6)}  (limit ${limit}; goal: never over: ${verdict(w.max_in_window <= limit)})`);
  console.log(`    most in any 1 s span (sliding) ${String(w.max_in_any_second).padStart(6)}  (printed; over the limit when calls reached the sandbox more unevenly than service.rate_limits.margin_ms allows)`);
  console.log(`    throughput / limit             ${(rate / limit).toFixed(3).padStart(6)}  (${w.calls} calls at ${rate.toFixed(2)}/s; goal: at least 0.95: ${verdict(rate / limit >= 0.95)})`);
  return w.max_in_window <= limit && rate / limit >= 0.95;
}
