/**
 * One range of the audit trail read for its check (audit/chain-range.ts), in
 * pages by sequence, each row as an array, with the body of its hash's
 * encoding built by SQLite: json_array() of the six fields for version 2, the
 * fields joined by newlines for version 1, as audit/chain.ts encodes them.
 * Only when every field is text: a number or a blob would be written
 * otherwise by each, and the row is then read whole and hashed by chain.ts.
 */
import type Database from 'better-sqlite3';
import type { AuditEntry } from '../../audit/chain.js';
import { RangeCheck } from '../../audit/chain-range.js';
import type { RangeRow, RangeSummary } from '../../audit/chain-range.js';
import { AUDIT_COLUMNS } from '../queries/audit.js';

const PAGE = 2_000;

const TEXT = ['prev_hash', 'at', 'actor', 'action', 'subject', 'details'].map((column) => `typeof(${column}) = 'text'`).join(' AND ');
const V1_BODY = "prev_hash || char(10) || at || char(10) || actor || char(10) || action || char(10) || subject || char(10) || details";
const BODY = `CASE WHEN typeof(version) = 'integer' AND ${TEXT} THEN CASE version WHEN 2 THEN json_array(prev_hash, at, actor, action, subject, details) WHEN 1 THEN ${V1_BODY} END END`;

export const AUDIT_RANGE_SQL = {
  page: `SELECT seq, version, prev_hash, hash, ${BODY}, action, subject FROM audit_log WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ${PAGE}`,
  whole: `SELECT ${AUDIT_COLUMNS} FROM audit_log WHERE seq = ?`,
};

/** The entries after `afterSeq` through `throughSeq`, checked; stops reading at the range's first fault. */
export function checkAuditRange(db: Database.Database, afterSeq: number, throughSeq: number): RangeSummary {
  const page = db.prepare(AUDIT_RANGE_SQL.page).raw();
  const whole = db.prepare(AUDIT_RANGE_SQL.whole);
  const check = new RangeCheck((seq) => whole.get(seq) as AuditEntry);
  for (let after = afterSeq; ;) {
    const rows = page.all(after, throughSeq) as RangeRow[];
    for (const row of rows) if (!check.take(row)) return check.result;
    if (rows.length < PAGE) return check.result;
    after = (rows[rows.length - 1] as RangeRow)[0];
  }
}

/** A range as the threads cut and claim them: the sequence numbers after `after`, through `through`. */
export interface SeqRange {
  after: number;
  through: number;
}

/**
 * Checks ranges claimed one after another from those every thread shares: `claims[0]` the next to claim,
 * `claims[1]` the first found at fault (none after it is claimed). Each summary is told as it is made.
 */
export function checkClaimedRanges(db: Database.Database, ranges: readonly SeqRange[], claims: Int32Array, told: (index: number, summary: RangeSummary) => void): void {
  for (let index = Atomics.add(claims, 0, 1); index < ranges.length && index < Atomics.load(claims, 1); index = Atomics.add(claims, 0, 1)) {
    const range = ranges[index] as SeqRange;
    const summary = checkAuditRange(db, range.after, range.through);
    if (summary.fault) {
      // The lowest range at fault wins: another thread may have found one further on first.
      for (let seen = Atomics.load(claims, 1); index < seen; seen = Atomics.load(claims, 1)) if (Atomics.compareExchange(claims, 1, seen, index) === seen) break;
    }
    told(index, summary);
  }
}

/** A read-only connection for the ranges, with SQLite's default 2 MB page cache (every page passes through it once). */
export function openForRanges(open: typeof Database, file: string): Database.Database {
  const db = new open(file, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  db.pragma('cache_size = -2000');
  return db;
}
