/**
 * The audit trail: append-only and hash-chained. Each entry carries the hash of
 * the one before, and its own hash over that and its content, so that an entry
 * edited, deleted, inserted or moved breaks the chain where it happened. The
 * chain head (its last sequence number and hash) is printed in every batch
 * summary and reconciliation report: a later rewrite of the whole history is
 * caught against what accounting signed off. Pure.
 *
 * Two encodings, named by each entry's version. Version 1 (entries written
 * before migration 14 / PostgreSQL 8) joined the fields with newlines, so a
 * newline moved from one field to the next hashed the same: those entries keep
 * their hash, and verify as they always did. Version 2, every entry written
 * since, hashes a JSON array of the fields (each string quoted and escaped), so
 * no two different entries share their bytes. A version 1 entry after a
 * version 2 one can only be a version changed by hand, and breaks the chain.
 */
import { hash } from 'node:crypto';

export const GENESIS = '0'.repeat(64);

export interface AuditEntry {
  seq: number;
  /** How the hash encodes the entry: 1 (fields joined by newlines, ambiguous, kept for old entries) or 2 (a JSON array). */
  version: number;
  at: string;
  /** Who: a person of the approval policy, the inbox's submitter, or paybatch itself. */
  actor: string;
  action: string;
  /** What it is about: a batch, a batch and line, a file, a report. */
  subject: string;
  /** Canonical JSON of the details. */
  details: string;
  prev_hash: string;
  hash: string;
}

export type NewAuditEntry = Pick<AuditEntry, 'at' | 'actor' | 'action' | 'subject'> & { details: Record<string, unknown> };

/** JSON with keys sorted: the same details always hash the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The version every new entry is written with. */
export const AUDIT_VERSION = 2;

/** A version paybatch writes or once wrote: any other is an entry edited by hand. */
export const writtenVersion = (version: number): boolean => version === 1 || version === AUDIT_VERSION;

type Hashed = Pick<AuditEntry, 'at' | 'actor' | 'action' | 'subject' | 'details'>;

/**
 * The bytes an entry's hash is over, from the body of its version's encoding: version 1's fields joined by newlines
 * as they are, a later version's JSON array of them after a line naming the version.
 */
function framed(body: string, version: number): string {
  return version === 1 ? body : `paybatch audit v${version}\n${body}`;
}

/** The bytes an entry's hash is over, in its version's encoding (an unknown version hashes as nothing valid). */
function encoded(prevHash: string, entry: Hashed, version: number): string {
  if (version === 1) return framed(`${prevHash}\n${entry.at}\n${entry.actor}\n${entry.action}\n${entry.subject}\n${entry.details}`, version);
  // Each field a JSON string: its bounds are its quotes, and a quote or newline inside it is escaped.
  return framed(JSON.stringify([prevHash, entry.at, entry.actor, entry.action, entry.subject, entry.details]), version);
}

export function entryHash(prevHash: string, entry: Hashed, version: number = AUDIT_VERSION): string {
  // One shot: no Hash object made and thrown away for each entry.
  return hash('sha256', encoded(prevHash, entry, version), 'hex');
}

/**
 * The hash of an entry whose encoding's body was built elsewhere (by the database, for `audit verify`: see
 * audit/chain-range.ts): the same as entryHash when that body is the one encoded() builds, byte for byte.
 */
export function bodyHash(body: string, version: number): string {
  return hash('sha256', framed(body, version), 'hex');
}

/**
 * The bytes a new entry's hash is over, without the hash of the entry before it: `before`, then that hash, then
 * `after` are what entryHash hashes. For a database that chains the entry itself, under its lock, in one statement
 * (store/postgres/audit.ts); a hash is 64 hex digits, which JSON quotes as they are.
 */
export function encodedAround(entry: Hashed): { before: string; after: string } {
  const rest = JSON.stringify([entry.at, entry.actor, entry.action, entry.subject, entry.details]);
  return { before: framed('["', AUDIT_VERSION), after: `",${rest.slice(1)}` };
}

/** The entry to store after `prevHash`. */
export function chained(prevHash: string, entry: NewAuditEntry): Omit<AuditEntry, 'seq'> {
  const stored = { at: entry.at, actor: entry.actor, action: entry.action, subject: entry.subject, details: canonicalJson(entry.details) };
  return { ...stored, version: AUDIT_VERSION, prev_hash: prevHash, hash: entryHash(prevHash, stored, AUDIT_VERSION) };
}

export type Break = { seq: number; kind: 'edited' | 'deleted' | 'inserted' | 'reordered'; message: string };

/**
 * Walks the trail in order of sequence and names the first break: an entry
 * whose content no longer matches its hash (edited); one whose link skips
 * entries that are gone (deleted); one that follows an entry not its
 * predecessor (reordered); or one the chain does not lead to (inserted).
 */
/** Recent hashes a walker remembers: enough to tell a move from an insertion, and memory stays flat on a long trail. */
export const WINDOW = 10_000;

export class ChainWalker {
  private prev: AuditEntry | null = null;
  private readonly before: AuditEntry[] = [];
  private readonly hashes = new Map<string, number>();
  /** The window's hashes in the order they came, to forget the oldest: a Map's first key found by keys() walks past every key deleted before it. */
  private readonly window: (string | undefined)[] = new Array<string | undefined>(WINDOW);
  private windowAt = 0;
  /** The highest version seen so far: versions only ever go up along the trail. */
  private version = 1;
  count = 0;
  head: { seq: number; hash: string } = { seq: 0, hash: GENESIS };

  /**
   * Goes on from an entry verified earlier (a kept checkpoint): the next entry
   * must chain from it. Nothing before it is looked at again.
   */
  resumeFrom(entry: AuditEntry): void {
    this.prev = entry;
    this.before.push(entry);
    this.remember(entry);
    this.version = Math.max(this.version, Number(entry.version ?? 1));
    this.head = { seq: entry.seq, hash: entry.hash };
  }

  private remember(entry: AuditEntry): void {
    const oldest = this.window[this.windowAt];
    if (oldest !== undefined && this.hashes.get(oldest) !== undefined) this.hashes.delete(oldest);
    this.window[this.windowAt] = entry.hash;
    this.windowAt = (this.windowAt + 1) % WINDOW;
    this.hashes.set(entry.hash, entry.seq);
  }

  /** Takes the next entry (and a look at the one after it); returns the break it shows, if any. */
  next(entry: AuditEntry, following?: AuditEntry): Break | null {
    this.count += 1;
    const expectedPrev = this.prev?.hash ?? GENESIS;
    let found: Break | null = null;
    const version = Number(entry.version ?? 1);
    if (!writtenVersion(version)) {
      found = { seq: entry.seq, kind: 'edited', message: `entry ${entry.seq} (${entry.action} ${entry.subject}) was edited: its version ${entry.version} is not one paybatch writes` };
    } else if (version < this.version) {
      found = { seq: entry.seq, kind: 'edited', message: `entry ${entry.seq} (${entry.action} ${entry.subject}) was edited: it is marked version ${version} after entries of version ${this.version}` };
    } else if (entryHash(entry.prev_hash, entry, version) !== entry.hash) {
      found = { seq: entry.seq, kind: 'edited', message: `entry ${entry.seq} (${entry.action} ${entry.subject}) was edited: its content no longer matches its hash` };
    } else if (entry.prev_hash !== expectedPrev) {
      const linked = this.hashes.get(entry.prev_hash);
      const twoBack = this.before.length >= 2 ? this.before[this.before.length - 2] : undefined;
      if (following && entry.prev_hash === following.hash) {
        found = { seq: entry.seq, kind: 'reordered', message: `entry ${entry.seq} (${entry.action} ${entry.subject}) is out of order: it chains from entry ${following.seq}, which comes after it` };
      } else if (twoBack && entry.prev_hash === twoBack.hash) {
        found = { seq: this.prev?.seq ?? entry.seq, kind: 'inserted', message: `entry ${this.prev?.seq} (${this.prev?.action} ${this.prev?.subject}) was inserted: the entry after it chains from the one before it` };
      } else if (linked !== undefined) {
        found = { seq: entry.seq, kind: 'reordered', message: `entry ${entry.seq} (${entry.action} ${entry.subject}) is out of order: it follows entry ${linked}, not entry ${this.prev?.seq ?? 0}` };
      } else if (entry.seq > (this.prev?.seq ?? 0) + 1) {
        const from = (this.prev?.seq ?? 0) + 1;
        found = { seq: from, kind: 'deleted', message: `${from === entry.seq - 1 ? `entry ${from} was` : `entries ${from} to ${entry.seq - 1} were`} deleted: entry ${entry.seq} chains from an entry no longer there` };
      } else {
        found = { seq: entry.seq, kind: 'inserted', message: `entry ${entry.seq} (${entry.action} ${entry.subject}) was inserted: it chains from no entry of the trail` };
      }
    }
    // A window of recent hashes is enough to tell a move from an insertion, and keeps memory flat on a long trail.
    this.remember(entry);
    this.before.push(entry);
    if (this.before.length > 2) this.before.shift();
    this.prev = entry;
    if (version === AUDIT_VERSION) this.version = version;
    this.head = { seq: entry.seq, hash: entry.hash };
    return found;
  }
}
