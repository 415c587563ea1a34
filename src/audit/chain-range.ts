/**
 * The chain checked in ranges, several at once (`paybatch audit verify`). Each
 * range of the trail, in order of sequence, checks of its own entries what
 * ChainWalker checks: a version paybatch writes, never going back; content
 * matching its hash; each link the hash of the entry before. It says how it
 * starts and ends, and firstFault() checks the seams between ranges and names
 * the first entry at fault. What kind of break that is, and its message, is
 * ChainWalker's to say, walked from a little before it (engine/audit-verification.ts).
 *
 * The encoding's body may come built by the database (SQLite's json_array(),
 * much cheaper than reading six fields and encoding them here): it is taken as
 * it comes only when it is plain ASCII, where its bytes are provably those
 * chain.ts hashes (test/audit/verify-ranges.test.ts holds both to it);
 * any other entry is read whole and hashed by chain.ts itself. Pure, but for
 * that read, which the caller gives.
 */
import { entryBatch, subjectBatch } from './entry-batch.js';
import type { AuditEntry } from './chain.js';
import { AUDIT_VERSION, GENESIS, bodyHash, entryHash, writtenVersion } from './chain.js';

/** Entries by action and by batch: what a check counts as it goes, kept with the verification (AuditCheckpoint). */
export interface AuditCounts {
  actions: Record<string, number>;
  batches: Record<string, number>;
}

/** One range of the trail as checked on its own: its ends, its first fault, what it counted. */
export interface RangeSummary {
  entries: number;
  first: { seq: number; prev_hash: unknown; version: number } | null;
  last: { seq: number; hash: unknown } | null;
  /** The highest version the range holds (1 when it holds none higher), as ChainWalker follows it. */
  version: number;
  /** The first entry at fault, its link to the entry before the range aside (a seam, firstFault's), and how many came before it in the range. */
  fault: { seq: number; index: number } | null;
  counts: AuditCounts;
}

/**
 * An entry as a range reads it, a row of the database as an array (no object made for each): its sequence number,
 * version, link and hash, the body of its encoding when the database built it (else null), and its action and
 * subject (what it is counted by; its details are read whole only when its subject does not name its batch).
 */
export type RangeRow = [seq: number, version: unknown, prev_hash: unknown, hash: unknown, body: string | null, action: string, subject: string];

/** What a range found: how it starts and ends, where it is first at fault, and its entries counted. */

// Printable ASCII (and, in version 1's body, the newlines joining its fields): escaped by SQLite exactly as by JSON.stringify.
const NOT_PLAIN = /[^\x20-\x7e]/;
const NOT_PLAIN_V1 = /[^\x20-\x7e\n]/;

/** The entry's hash as chain.ts makes it: from the body the database built when it is plain, else from the whole entry. */
function hashOf(row: RangeRow, version: number, whole: (seq: number) => AuditEntry): string {
  const body = row[4];
  if (typeof body === 'string' && !(version === 1 ? NOT_PLAIN_V1 : NOT_PLAIN).test(body)) return bodyHash(body, version);
  const entry = whole(row[0]);
  return entryHash(entry.prev_hash, entry, version);
}

/** Adds an entry to the counts by action and by batch, as countEntry does, its details read only when needed. */
function count(counts: AuditCounts, row: RangeRow, whole: (seq: number) => AuditEntry): void {
  const [seq, , , , , action, subject] = row;
  counts.actions[action] = (counts.actions[action] ?? 0) + 1;
  const batch = subjectBatch(subject) ?? entryBatch(subject, whole(seq).details);
  if (batch !== null) counts.batches[batch] = (counts.batches[batch] ?? 0) + 1;
}

export class RangeCheck {
  private readonly summary: RangeSummary = { entries: 0, first: null, last: null, version: 1, fault: null, counts: { actions: {}, batches: {} } };

  /** `whole`: the entry at a sequence number, read with all its columns (for an entry whose body is not plain). */
  constructor(private readonly whole: (seq: number) => AuditEntry) {}

  /** Takes the range's next entry; false once the range is at fault (nothing after matters then). */
  take(row: RangeRow): boolean {
    const s = this.summary;
    const [seq, stored, prevHash, hash] = row;
    const version = Number(stored ?? 1);
    s.first ??= { seq, prev_hash: prevHash, version };
    const faulty = !writtenVersion(version) || version < s.version || hashOf(row, version, this.whole) !== hash || (s.last !== null && prevHash !== s.last.hash);
    if (faulty) {
      s.fault = { seq, index: s.entries };
      return false;
    }
    count(s.counts, row, this.whole);
    s.entries += 1;
    if (s.last) {
      s.last.seq = seq;
      s.last.hash = hash;
    } else {
      s.last = { seq, hash };
    }
    if (version === AUDIT_VERSION) s.version = version;
    return true;
  }

  get result(): RangeSummary {
    return this.summary;
  }
}

/** The first entry at fault across ranges in order, with how many entries come before it; null when none is. */
export function firstFault(ranges: readonly RangeSummary[]): { seq: number; index: number } | null {
  let lastHash: unknown = GENESIS;
  let version = 1;
  let before = 0;
  for (const range of ranges) {
    const first = range.first;
    // The seam: the range's first entry chains from the last one before it, and its version does not go back.
    if (first && (first.prev_hash !== lastHash || (writtenVersion(first.version) && first.version < version))) return { seq: first.seq, index: before };
    if (range.fault) return { seq: range.fault.seq, index: before + range.fault.index };
    if (range.last) {
      lastHash = range.last.hash;
      version = Math.max(version, range.version);
    }
    before += range.entries;
  }
  return null;
}

/** The ranges' counts added up, in order (each key where it first appeared). */
export function addCounts(ranges: readonly RangeSummary[]): AuditCounts {
  const total: AuditCounts = { actions: {}, batches: {} };
  for (const range of ranges) {
    for (const [key, n] of Object.entries(range.counts.actions)) total.actions[key] = (total.actions[key] ?? 0) + n;
    for (const [key, n] of Object.entries(range.counts.batches)) total.batches[key] = (total.batches[key] ?? 0) + n;
  }
  return total;
}
