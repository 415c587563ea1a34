/**
 * What `run` says of a file in the inbox it does not take yet: until when it
 * waits, for what, and how to end the wait at once. Pure: from what was seen of
 * the file (workspace/arrival.ts) and the intake policy.
 */
import type { ArrivalPolicy, Seen } from '../workspace/arrival.js';
import { companionNames, wholeBy } from '../workspace/arrival.js';
import { clockTime } from './batch-stage.js';

export interface FileWait {
  /** One line for a person: `waiting until 12:04:31 for inbox/pay.csv to stay unchanged (...)`. */
  line: string;
  /** When it is taken if it stays as it is; null when that waits for a marker or manifest, not for time. */
  readyAt: number | null;
}

export function fileWait(name: string, seen: Seen, policy: ArrivalPolicy): FileWait {
  const shown = `inbox/${name}`;
  const [marker] = companionNames(name).markers;
  const [manifest] = companionNames(name).manifests;
  if (policy.marker === 'required' && !seen.marker) {
    const stale = seen.staleMarker ? ' (the one there is older than the file\'s last change)' : '';
    return { line: `waiting for ${shown}'s completion marker ${marker}${stale}: intake.marker is required`, readyAt: null };
  }
  if (policy.manifest === 'required' && !seen.manifest) return { line: `waiting for ${shown}'s manifest ${manifest}: intake.manifest is required`, readyAt: null };
  const readyAt = wholeBy(seen, policy) as number;
  const skip = policy.marker === 'off' ? 'completion markers are off (intake.marker)' : `write ${marker} to take it at once`;
  if (!seen.endsWithLineEnd) {
    return { line: `waiting until ${clockTime(readyAt)} for ${shown} to end whole and stay unchanged (its last line has no line end yet; once it is whole, ${skip})`, readyAt };
  }
  const why = seen.staleMarker ? 'its completion marker is older than the file and ignored' : 'no completion marker';
  return { line: `waiting until ${clockTime(readyAt)} for ${shown} to stay unchanged (${why}; ${skip})`, readyAt };
}

/**
 * Whether a waiting file may still be taken before `until`: a marker may come at any moment; a file cut short may
 * end whole now and then need the stability interval.
 */
export function mayBeTakenBy(wait: FileWait, seen: Seen, policy: ArrivalPolicy, now: number, until: number): boolean {
  if (wait.readyAt === null || wait.readyAt <= until) return true;
  return !seen.endsWithLineEnd && now + policy.stableMs <= until;
}

/** How often `run` looks again at a file whose last line has no end yet. */
export const CUT_SHORT_LOOK_MS = 1_000;

/**
 * When `run` looks at a waiting file again: a file cut short (its last write ended mid-line) is still being written,
 * so within a second (or the stability interval, if shorter), so that once it is whole it is measured from then, not
 * found whole only at the end of the longer wait its cut set. `watch` needs none of this: its watcher sees the change.
 */
export function lookAgainInMs(seen: Seen, retryInMs: number, policy: ArrivalPolicy): number {
  return seen.endsWithLineEnd ? retryInMs : Math.min(retryInMs, Math.min(policy.stableMs, CUT_SHORT_LOOK_MS));
}
