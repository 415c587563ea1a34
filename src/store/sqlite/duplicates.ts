/**
 * The possible-duplicate queries on SQLite (see engine/duplicates.ts): the
 * recipient accounts of rows, candidate twins, what was found, and a person's
 * allowance. Functions taking the connection; SqliteStore delegates to them.
 * Nothing here decides: the engine does, from what these return.
 */
import type { Statement } from 'better-sqlite3';
import type { NewAuditEntry } from '../../audit/chain.js';
import { DUPLICATE_HOLD, NEVER_SENT_PHASES, REASONS } from '../../payout-states.js';
import type { SqliteDatabase } from './database.js';
import type { Allowance, PossibleDuplicate, RecipientEntry, Twin, TwinQuery } from '../port.js';
import { phaseList } from '../sql-lists.js';

/** Rows that ended unpaid are nobody's twin: never sent, or final but not paid (cancelled, refunded). */
export const NOT_UNPAID = `r.phase NOT IN ${phaseList(NEVER_SENT_PHASES)} AND NOT (r.phase = 'final' AND COALESCE(r.state, '') <> 'paid')`;

const TWINS = `SELECT r.batch_id, r.line, r.external_id, r.phase, r.state, COALESCE(r.created_at, b.received_at) AS at
  FROM row_recipients k JOIN rows r ON r.batch_id = k.batch_id AND r.line = k.line JOIN batches b ON b.id = k.batch_id
  WHERE k.recipient_key = @key AND k.currency = @currency AND k.amount = @amount
    AND k.batch_id <> @batch_id
    AND ${NOT_UNPAID} AND COALESCE(r.created_at, b.received_at) >= @since
  ORDER BY at DESC, r.batch_id, r.line LIMIT @limit`;

/** Twins of a batch's rows in a range of lines, found in one pass over the index: (line, twin) pairs. */
const BATCH_TWINS = `SELECT k.line AS of_line, r.batch_id, r.line, r.external_id, r.phase, r.state, COALESCE(r.created_at, b.received_at) AS at
  FROM row_recipients k
  JOIN row_recipients t ON t.recipient_key = k.recipient_key AND t.currency = k.currency AND t.amount = k.amount AND t.batch_id <> k.batch_id
  JOIN rows r ON r.batch_id = t.batch_id AND r.line = t.line JOIN batches b ON b.id = t.batch_id
  WHERE k.batch_id = @batch_id AND k.line > @after AND k.line <= @upto AND ${NOT_UNPAID} AND COALESCE(r.created_at, b.received_at) >= @since
  ORDER BY k.line`;

export type LineTwin = Twin & { of_line: number };

/** Statements compiled once per connection: the check runs once a row on a large batch. */
const compiled = new WeakMap<SqliteDatabase, Map<string, Statement>>();
function statement(db: SqliteDatabase, text: string): Statement {
  let map = compiled.get(db);
  if (!map) compiled.set(db, (map = new Map()));
  let found = map.get(text);
  if (!found) map.set(text, (found = db.prepare(text)));
  return found;
}

export function batchTwinsSqlite(db: SqliteDatabase, batchId: string, after: number, upto: number, since: string): LineTwin[] {
  return statement(db, BATCH_TWINS).all({ batch_id: batchId, after, upto, since }) as LineTwin[];
}

/**
 * Holds a row of a batch being taken in: sendable as stored ('ready'), or waiting for its acceptance ('checking': its
 * external_id looked taken; PostgreSQL stores every row so). Not one whose external_id another row was or will be sent
 * with: the acceptance refuses that one, as before.
 */
export const HOLD = `UPDATE rows SET phase = '${DUPLICATE_HOLD}', outcome = $1, outcome_detail = $2, revision = revision + 1
  WHERE batch_id = $3 AND line = $4 AND phase IN ('ready', 'checking') AND NOT EXISTS (
    SELECT 1 FROM rows o WHERE o.external_id = rows.external_id AND o.phase NOT IN ${phaseList(NEVER_SENT_PHASES)} AND NOT (o.batch_id = rows.batch_id AND o.line = rows.line))`;

interface FoundColumns {
  batch_id: string; line: number; external_id: string | null; twin_batch: string; twin_line: number; twin_external_id: string | null;
  twin_state: string; twin_at: string; action: string; detail: string; allowed_by: string | null; allowed_reason: string | null; allowed_at: string | null;
}

const toFound = (c: FoundColumns): PossibleDuplicate => ({
  batch_id: c.batch_id, line: c.line, external_id: c.external_id, action: c.action, detail: c.detail,
  twin: { batch_id: c.twin_batch, line: c.twin_line, external_id: c.twin_external_id, phase: c.twin_state, state: c.twin_state, at: c.twin_at },
  allowed_by: c.allowed_by, allowed_reason: c.allowed_reason, allowed_at: c.allowed_at,
});

/** Call inside a transaction. */
export function recordRecipientsSqlite(db: SqliteDatabase, batchId: string, entries: readonly RecipientEntry[]): void {
  const insert = statement(db, 'INSERT OR REPLACE INTO row_recipients (batch_id, line, recipient_key, currency, amount) VALUES (?, ?, ?, ?, ?)');
  for (const e of entries) insert.run(batchId, e.line, e.key, e.currency, e.amount);
}

export function twinsOfSqlite(db: SqliteDatabase, query: TwinQuery, since: string, limit: number): Twin[] {
  return statement(db, TWINS).all({ key: query.key, currency: query.currency, amount: query.amount, batch_id: query.batch_id, since, limit }) as Twin[];
}

/** Call inside a transaction: the findings kept, and each `hold` row still ready moved to duplicate_hold. */
export function recordPossibleDuplicatesSqlite(db: SqliteDatabase, found: readonly Omit<PossibleDuplicate, 'allowed_by' | 'allowed_reason' | 'allowed_at'>[]): void {
  const insert = statement(db, `INSERT OR REPLACE INTO possible_duplicates (batch_id, line, external_id, twin_batch, twin_line, twin_external_id, twin_state, twin_at, action, detail)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  // Its parameters come in the order of their numbers.
  const hold = statement(db, HOLD.replace(/\$\d/g, '?'));
  for (const f of found) {
    insert.run(f.batch_id, f.line, f.external_id, f.twin.batch_id, f.twin.line, f.twin.external_id, f.twin.state ?? f.twin.phase, f.twin.at, f.action, f.detail);
    if (f.action === 'hold') hold.run(REASONS.possibleDuplicate, f.detail, f.batch_id, f.line);
  }
}

export function possibleDuplicatesSqlite(db: SqliteDatabase, batchId: string): PossibleDuplicate[] {
  return (statement(db, 'SELECT * FROM possible_duplicates WHERE batch_id = ? ORDER BY line').all(batchId) as FoundColumns[]).map(toFound);
}

export function heldDuplicatesSqlite(db: SqliteDatabase, limit: number): PossibleDuplicate[] {
  return (statement(db, `SELECT d.* FROM possible_duplicates d JOIN rows r ON r.batch_id = d.batch_id AND r.line = d.line
    WHERE r.phase = '${DUPLICATE_HOLD}' ORDER BY d.batch_id, d.line LIMIT ?`).all(limit) as FoundColumns[]).map(toFound);
}

export const END_HELD = `UPDATE rows SET phase = 'not_sent', outcome = $1, outcome_detail = $2, revision = revision + 1 WHERE batch_id = $3 AND phase = '${DUPLICATE_HOLD}'`;

export function endHeldDuplicatesSqlite(db: SqliteDatabase, batchId: string, outcome: string | null, detail: string | null): number {
  return statement(db, END_HELD.replace(/\$\d/g, '?')).run(outcome, detail, batchId).changes;
}

/** Call inside a transaction; `audit` appends to the trail in it. */
export function allowDuplicateSqlite(db: SqliteDatabase, batchId: string, line: number, allowance: Allowance, audit: (entry: NewAuditEntry) => void): boolean {
  const moved = statement(db, `UPDATE rows SET phase = 'ready', outcome = NULL, outcome_detail = NULL, revision = revision + 1
    WHERE batch_id = ? AND line = ? AND phase = '${DUPLICATE_HOLD}'`).run(batchId, line).changes;
  if (moved === 0) return false;
  statement(db, 'UPDATE possible_duplicates SET allowed_by = ?, allowed_reason = ?, allowed_at = ? WHERE batch_id = ? AND line = ?')
    .run(allowance.person, allowance.reason, allowance.at, batchId, line);
  const found = statement(db, 'SELECT * FROM possible_duplicates WHERE batch_id = ? AND line = ?').get(batchId, line) as FoundColumns | undefined;
  audit({
    at: allowance.at, actor: allowance.person, action: 'duplicate_allowed', subject: `${batchId} line ${line}`,
    details: { reason: allowance.reason, external_id: found?.external_id ?? null, twin: found ? { batch: found.twin_batch, line: found.twin_line, external_id: found.twin_external_id } : null },
  });
  return true;
}
