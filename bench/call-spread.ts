/** The spread of call durations (ms): their mean and where the middle, the 90th and the 99th in a hundred fall. */
export interface CallSpread {
  count: number;
  mean: number;
  median: number;
  p90: number;
  p99: number;
}

export function callSpread(durationsMs: readonly number[]): CallSpread {
  const sorted = [...durationsMs].sort((a, b) => a - b);
  const at = (fraction: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? 0;
  const mean = sorted.length === 0 ? 0 : sorted.reduce((sum, duration) => sum + duration, 0) / sorted.length;
  return { count: sorted.length, mean, median: at(0.5), p90: at(0.9), p99: at(0.99) };
}

/** The same calls timed on both sides: by paybatch, and by the sandbox from each request's arrival to its answer sent. */
export interface BothSides {
  paybatch: CallSpread;
  sandbox: CallSpread;
}

/** "21.9 ms (median 21.2, 90th 24.1, 99th 32.0)" */
export const spreadText = (spread: CallSpread): string =>
  `${spread.mean.toFixed(1)} ms (median ${spread.median.toFixed(1)}, 90th ${spread.p90.toFixed(1)}, 99th ${spread.p99.toFixed(1)})`;
