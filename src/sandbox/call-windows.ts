/**
 * Calls to the service interface counted per one-second window (wall-clock
 * seconds at arrival, whatever the sandbox's own time), per endpoint and
 * overall: a test or a benchmark asks `/_sandbox/call-windows` whether any
 * window held more calls than a configured rate limit allowed. Two counts:
 * calendar seconds (as a service that resets its count each second), and
 * any one-second span (as a service with a sliding window: the stricter). Every request
 * that reached a route is counted, refused ones (401, 429 faults) included:
 * a live service counts them too.
 */

/** The endpoints a rate limit names (as paybatch's service.rate_limits), and the rest. */
export type CountedEndpoint = 'create' | 'fund' | 'read' | 'lookup' | 'cancel' | 'other';

export function countedEndpoint(method: string, path: string): CountedEndpoint {
  if (method === 'POST' && path === '/transactions') return 'create';
  if (method === 'GET' && path === '/transactions') return 'lookup';
  if (method === 'POST' && /^\/transactions\/[^/]+\/fund$/.test(path)) return 'fund';
  if (/^\/transactions\/[^/]+$/.test(path)) {
    if (method === 'GET') return 'read';
    if (method === 'DELETE') return 'cancel';
  }
  return 'other';
}

export interface WindowFigures {
  calls: number;
  /** The most calls any one-second window held. */
  max_in_window: number;
  /** The window (its second since the epoch, as an ISO time) that held them, first found. */
  max_window_at: string | null;
  /** The most calls in any span of one second, wherever it starts (a sliding window): at least max_in_window. */
  max_in_any_second: number;
  /** The first and the last call's arrival (ms since the epoch): their rate is (calls - 1) over the time between. */
  first_at_ms: number | null;
  last_at_ms: number | null;
}

interface Tally {
  calls: number;
  max: number;
  maxSecond: number | null;
  second: number;
  inSecond: number;
  first: number | null;
  last: number | null;
  /** Arrivals of the last second, oldest first (from `head`): as many as the rate, never the whole run's. */
  recent: number[];
  head: number;
  maxSliding: number;
}

const fresh = (): Tally => ({ calls: 0, max: 0, maxSecond: null, second: -1, inSecond: 0, first: null, last: null, recent: [], head: 0, maxSliding: 0 });

export class CallWindows {
  private tallies = new Map<CountedEndpoint | 'overall', Tally>();

  constructor(private readonly now: () => number = Date.now) {}

  count(endpoint: CountedEndpoint): void {
    const at = this.now();
    this.add('overall', at);
    this.add(endpoint, at);
  }

  /** Per endpoint counted, and overall. */
  figures(): Record<string, WindowFigures> {
    const out: Record<string, WindowFigures> = {};
    for (const [name, t] of this.tallies) {
      const maxWindowAt = t.maxSecond === null ? null : new Date(t.maxSecond * 1000).toISOString();
      out[name] = { calls: t.calls, max_in_window: t.max, max_window_at: maxWindowAt, max_in_any_second: t.maxSliding, first_at_ms: t.first, last_at_ms: t.last };
    }
    return out;
  }

  reset(): void {
    this.tallies = new Map();
  }

  private add(name: CountedEndpoint | 'overall', at: number): void {
    const second = Math.floor(at / 1000);
    let t = this.tallies.get(name);
    if (!t) this.tallies.set(name, (t = fresh()));
    t.calls += 1;
    t.first ??= at;
    t.last = at;
    // Arrivals are in order of the wall clock, bar a step back of the clock: a window seen again starts over.
    if (second !== t.second) {
      t.second = second;
      t.inSecond = 0;
    }
    t.inSecond += 1;
    if (t.inSecond > t.max) {
      t.max = t.inSecond;
      t.maxSecond = second;
    }
    // The span [at - 999, at]: arrivals a whole second or more before this one are out of it.
    while (t.head < t.recent.length && (t.recent[t.head] as number) <= at - 1000) t.head += 1;
    if (t.head > 1024) {
      t.recent = t.recent.slice(t.head);
      t.head = 0;
    }
    t.recent.push(at);
    t.maxSliding = Math.max(t.maxSliding, t.recent.length - t.head);
  }
}
