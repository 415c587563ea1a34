/**
 * One listener on a stop signal however many waits share it. The engine gives
 * every call the same signal (its shutdown): an exchange under way, or a pause
 * before a retry, each listening to it themselves made Node warn of a leak past
 * ten (MaxListenersExceededWarning, printed to the user when a dozen reads were
 * in their backoff at once), where there was none.
 */

/** What waits on each stop signal, told when it fires. */
const waiting = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `end` when `stop` fires (not fired yet), until forgotten: returns the forgetting. */
export function whenStopped(stop: AbortSignal, end: () => void): () => void {
  let ends = waiting.get(stop);
  if (!ends) {
    const these = new Set<() => void>();
    ends = these;
    waiting.set(stop, these);
    stop.addEventListener('abort', () => {
      for (const ended of [...these]) ended();
      these.clear();
    }, { once: true });
  }
  ends.add(end);
  const registered = ends;
  return () => registered.delete(end);
}

/** Waits `ms`, or less when `stop` fires first (at once when it has): its timer is cleared then. */
export function pauseUnlessStopped(ms: number, stop: AbortSignal): Promise<void> {
  if (stop.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      forget();
      resolve();
    }, ms);
    const forget = whenStopped(stop, () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
