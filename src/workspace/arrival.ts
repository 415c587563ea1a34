/**
 * Whether a file in the inbox is complete, so that it is taken whole or not at
 * all. A batch file is a `.csv` or an `.xlsx` (NAME.csv below stands for
 * either). The conventions operators use, from the surest:
 * - written under a temporary name (NAME.csv.part, NAME.csv.tmp, a dot file)
 *   and renamed into place: it is not a batch file until the rename;
 * - a completion marker beside it (NAME.csv.done or NAME.done), written once
 *   the file is whole; required when `intake.marker` is `required`. It counts
 *   only when it is at least as new as the file's last change (a marker left
 *   from before, or written before the file, says nothing of this file) and the
 *   file ends whole (a marker written while the last line is cut short lies);
 * - a manifest beside it (NAME.csv.manifest.json or NAME.manifest.json) with
 *   control totals, as payment formats carry them (NbOfTxs, CtrlSum): the file
 *   is then checked against it; it too counts only for a file that ends whole;
 * - otherwise stability: size and modification time seen unchanged for
 *   `intake.stable_ms` by paybatch's own clock (a file server's clock may be
 *   off: its times are compared for equality only), and the last line ended (a
 *   stall in the middle of a field leaves a line without its end). A file whose
 *   last line never ends is taken only after four times as long.
 * Pure: the caller looks at the file, and remembers when it first saw it so;
 * this decides.
 */

export type CompanionPolicy = 'off' | 'optional' | 'required';

export interface ArrivalPolicy {
  stableMs: number;
  marker: CompanionPolicy;
  manifest: CompanionPolicy;
}

/** What the caller saw of a file in the inbox. */
export interface Sighting {
  size: number;
  mtimeMs: number;
  /** The file's last byte is a line end (or the file is empty). */
  endsWithLineEnd: boolean;
  /** A marker is there, at least as new as the file's last change. */
  marker: boolean;
  /** A marker is there but older than the file's last change: it says nothing of the file as it is. */
  staleMarker?: boolean;
  manifest: boolean;
}

/** A sighting, and since when (paybatch's clock, ms) the file has looked like this. */
export interface Seen extends Sighting {
  since: number;
}

export type Readiness =
  | { ready: true; by: 'marker' | 'manifest' | 'stable' }
  | { ready: false; reason: string; retryInMs: number };

/** How much longer than the stability interval a file without a final line end must stay unchanged. */
export const NO_LINE_END_FACTOR = 4;

/** Why a name in the inbox is not a batch file, or null when it is one. */
export function notABatchFile(name: string): string | null {
  if (name.startsWith('.')) return 'a hidden file';
  if (/\.(csv|xlsx|xml)\.(part|tmp)$/i.test(name)) return `still being written (taken once renamed to ${name.replace(/\.(part|tmp)$/i, '')})`;
  if (companionOf(name) !== null) return 'a completion marker or manifest (it goes with its batch file)';
  if (!/\.(csv|xlsx|xml)$/i.test(name)) return 'not a .csv, .xlsx or .xml (pain.001) file';
  return null;
}

/** The names a completion marker or a manifest of `name` may have, in the order they are looked for. */
export function companionNames(name: string): { markers: string[]; manifests: string[] } {
  const stem = name.replace(/\.(csv|xlsx|xml)$/i, '');
  return { markers: [`${name}.done`, `${stem}.done`], manifests: [`${name}.manifest.json`, `${stem}.manifest.json`] };
}

/** The batch file a companion belongs to, or null when the name is not a companion's (NAME.done is taken for NAME.csv's). */
export function companionOf(name: string): string | null {
  const match = /^(.+?)(\.csv|\.xlsx|\.xml)?\.(done|manifest\.json)$/i.exec(name);
  if (!match || name.startsWith('.')) return null;
  return `${match[1]}${match[2] ?? '.csv'}`;
}

/** The file as seen now, continuing `before` when nothing changed (or starting afresh). */
export function continued(now: Sighting, before: Seen | undefined, at: number): Seen {
  return before && before.size === now.size && before.mtimeMs === now.mtimeMs ? { ...now, since: before.since } : { ...now, since: at };
}

export function readiness(seen: Seen, now: number, policy: ArrivalPolicy): Readiness {
  if (policy.marker === 'required' && !seen.marker) {
    const reason = seen.staleMarker
      ? 'its completion marker is older than the file\'s last change (written before the file was): waiting for a new one (intake.marker is required)'
      : 'waiting for its completion marker (NAME.csv.done): intake.marker is required';
    return { ready: false, reason, retryInMs: 1000 };
  }
  if (policy.manifest === 'required' && !seen.manifest) {
    return { ready: false, reason: 'waiting for its manifest (NAME.csv.manifest.json): intake.manifest is required', retryInMs: 1000 };
  }
  // A marker or a manifest beside a file cut short (a last line without its end) does not make it whole: it is then
  // taken as any other file, by stability, four times as long.
  if (seen.endsWithLineEnd && seen.marker && policy.marker !== 'off') return { ready: true, by: 'marker' };
  if (seen.endsWithLineEnd && seen.manifest && policy.manifest !== 'off') return { ready: true, by: 'manifest' };
  const quiet = now - seen.since;
  const needed = seen.endsWithLineEnd ? policy.stableMs : policy.stableMs * NO_LINE_END_FACTOR;
  if (quiet >= needed) return { ready: true, by: 'stable' };
  const signalled = seen.marker || seen.manifest ? ', though its marker or manifest is there' : '';
  const reason = seen.endsWithLineEnd
    ? `not taken until seen unchanged for ${Math.round(policy.stableMs / 1000)} s (a file still being written changes)${seen.staleMarker ? '; its marker is older than the file, and ignored' : ''}`
    : `it does not end whole yet (a last line without its line end, or a spreadsheet without its end record)${signalled}: not taken until seen unchanged for ${Math.round(needed / 1000)} s`;
  return { ready: false, reason, retryInMs: Math.max(50, needed - quiet) };
}

/**
 * When the file, as seen, is taken if it stays as it is (ms on paybatch's clock), or null when that is not a matter
 * of time (a marker or manifest that is required and not there yet).
 */
export function wholeBy(seen: Seen, policy: ArrivalPolicy): number | null {
  if ((policy.marker === 'required' && !seen.marker) || (policy.manifest === 'required' && !seen.manifest)) return null;
  return seen.since + (seen.endsWithLineEnd ? policy.stableMs : policy.stableMs * NO_LINE_END_FACTOR);
}

/** Control characters (C0, DEL, C1): a name holding one could forge a line of the log or of a report. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** Whether a file's name holds a control character (a newline, say): such a file is refused, unread. */
export function hasControlCharacter(name: string): boolean {
  return name.search(CONTROL) !== -1;
}

/** The name as it may be printed: each control character written as an escape (\n, \r, \t, \xNN). */
export function printableName(name: string): string {
  const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
  return name.replace(CONTROL, (c) => named[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** The name a refused file is kept under: each control character replaced by `_`. */
export function safeName(name: string): string {
  return name.replace(CONTROL, '_');
}
