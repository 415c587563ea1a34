/**
 * One look at a file in the inbox: its size and time, whether it ends whole,
 * and its completion marker and manifest, if any. What the look means (is the
 * file complete?) is decided in workspace/arrival.ts; this only reads the disk.
 */
import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Clock } from '../clock.js';
import type { IntakeConfig } from '../config/config.js';
import type { Readiness, Seen } from '../workspace/arrival.js';
import { companionNames, continued, readiness } from '../workspace/arrival.js';

export interface InboxLook {
  readiness: Readiness;
  seen: Seen;
  /** The companions found (paths), to travel with the file once claimed; a marker too old to count is one of them. */
  marker: string | null;
  manifest: string | null;
}

export interface LookDeps {
  intake: IntakeConfig;
  /** The stability interval, when the caller has its own (watch.stable_ms); intake.stable_ms otherwise. */
  stableMs?: number;
  clock: Clock;
}

/** The first of `names` in `folder` that is a regular file (a link is not a companion), with its time, or null. */
async function firstFile(folder: string, names: readonly string[]): Promise<{ path: string; mtimeMs: number } | null> {
  for (const name of names) {
    const entry = await lstat(join(folder, name)).catch(() => null);
    if (entry?.isFile()) return { path: join(folder, name), mtimeMs: entry.mtimeMs };
  }
  return null;
}

/** A zip's end record: its signature, then 18 bytes and a comment of the length it gives (the last field). */
const ZIP_END = Buffer.from([0x50, 0x4b, 0x05, 0x06]);
const ZIP_END_MIN = 22;
const ZIP_END_MAX = ZIP_END_MIN + 0xffff;

/** Whether the end of `tail` (the last bytes of a file) is a whole zip end record: a spreadsheet written to its end. */
export function endsWithZipEnd(tail: Buffer): boolean {
  for (let at = tail.length - ZIP_END_MIN; at >= 0; at -= 1) {
    if (tail[at] === 0x50 && tail.subarray(at, at + 4).equals(ZIP_END)) return at + ZIP_END_MIN + tail.readUInt16LE(at + 20) === tail.length;
  }
  return false;
}

/** The end of a pain.001 is looked for in its last bytes: the closing tag, and whitespace after it. */
const XML_END_MAX = 256;

/**
 * Whether the file ends whole: a text file's last byte is a line end (a stall in
 * the middle of a field leaves a line without one); a spreadsheet (.xlsx, a zip)
 * ends with its end record, which a writer puts last; a pain.001 (.xml) with its
 * root element closed (a writer may leave no line end after it).
 */
async function endsWhole(path: string, size: number): Promise<boolean> {
  if (size === 0) return true;
  const spreadsheet = /\.xlsx$/i.test(path);
  const xml = /\.xml$/i.test(path);
  const length = spreadsheet ? Math.min(size, ZIP_END_MAX) : xml ? Math.min(size, XML_END_MAX) : 1;
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const tail = Buffer.alloc(length);
    await handle.read(tail, 0, length, size - length);
    if (xml) return /<\/([A-Za-z_][\w.-]*:)?Document>\s*$/.test(tail.toString('latin1'));
    return spreadsheet ? endsWithZipEnd(tail) : tail[0] === 0x0a || tail[0] === 0x0d;
  } finally {
    await handle.close();
  }
}

/**
 * Looks at a file in the inbox: whether it is complete (see workspace/arrival.ts),
 * and its marker and manifest if it has them. Null when it is gone. A link or a
 * folder counts as ready: it is refused unread when taken, its companions with it.
 * A marker counts only when it is at least as new as the file's last change
 * (times of one file system, compared with each other only); an older one is
 * still returned, to go wherever the file goes.
 */
export async function lookAtInboxFile(path: string, deps: LookDeps, before?: Seen): Promise<InboxLook | null> {
  const entry = await lstat(path).catch(() => null);
  if (!entry) return null;
  const folder = dirname(path);
  const { markers, manifests } = companionNames(basename(path));
  const marker = deps.intake.marker === 'off' ? null : await firstFile(folder, markers);
  const manifest = deps.intake.manifest === 'off' ? null : await firstFile(folder, manifests);
  const companions = { marker: marker?.path ?? null, manifest: manifest?.path ?? null };
  if (!entry.isFile()) {
    const seen = { size: entry.size, mtimeMs: entry.mtimeMs, endsWithLineEnd: true, marker: false, manifest: false, since: deps.clock.now() };
    return { readiness: { ready: true, by: 'stable' }, seen, ...companions };
  }
  const lineEnd = await endsWhole(path, entry.size).catch(() => true);
  // An empty file is no batch: its marker (one written just before the file was created, within one tick of the file
  // system's clock) says nothing of what is to come.
  const fresh = marker !== null && marker.mtimeMs >= entry.mtimeMs && entry.size > 0;
  const sighting = { size: entry.size, mtimeMs: entry.mtimeMs, endsWithLineEnd: lineEnd, marker: fresh, staleMarker: marker !== null && !fresh, manifest: manifest !== null };
  const seen = continued(sighting, before, deps.clock.now());
  const policy = { stableMs: deps.stableMs ?? deps.intake.stable_ms, marker: deps.intake.marker, manifest: deps.intake.manifest };
  return { readiness: readiness(seen, deps.clock.now(), policy), seen, ...companions };
}
