/**
 * The possible-duplicate queries (see engine/duplicates.ts): the recipient
 * accounts of rows, candidate twins, what was found, and a person's allowance.
 * Written once for both databases, with `?` placeholders. The reads are
 * functions taking a connection, bound in shared-store.ts; the writes that
 * need a transaction of several statements are run by each database's own
 * (sqlite/duplicates.ts in c.atomic, postgres/duplicates.ts in c.tx) from the
 * statements and parameters here. Nothing here decides: the engine does, from
 * what these return.
 */
import type { NewAuditEntry } from '../../audit/chain.js';
import { DUPLICATE_HOLD, NEVER_SENT_PHASES, REASONS, isTxState, phaseOf } from '../../payout-states.js';
import type { Phase } from '../../payout-states.js';
import type { Allowance, PossibleDuplicate, RecipientEntry, SameBatchTwin, Twin, TwinQuery } from '../port.js';
import { BEFORE_SENDING, phaseList } from '../sql-lists.js';
import type { SqlConnection } from './connection.js';

/** Rows that ended unpaid are nobody's twin: never sent, or final but not paid (cancelled, refunded). */
const NOT_UNPAID = `r.phase NOT IN ${phaseList(NEVER_SENT_PHASES)} AND NOT (r.phase = 'final' AND COALESCE(r.state, '') <> 'paid')`;

const TWINS = `SELECT r.batch_id, r.line, r.external_id, r.phase, r.state, COALESCE(r.created_at, b.received_at) AS at
  FROM recipient_payments k JOIN rows r ON r.batch_id = k.batch_id AND r.line = k.line JOIN batches b ON b.id = k.batch_id
  WHERE k.recipient_key = ? AND k.currency = ? AND k.amount = ?
    AND k.batch_id <> ?
    AND ${NOT_UNPAID} AND COALESCE(r.created_at, b.received_at) >= ?
  ORDER BY at DESC, r.batch_id, r.line LIMIT ?`;

/**
 * Twins of a batch's rows in a range of lines: (line, twin) pairs, from the batches before this one's id or those
 * after it (`side`), a range of the table by payment each (its key ends in the batch and the line). A condition of
 * "another batch" alone walked this batch's own entries of each payment for every row (ten thousand payments of one
 * account one amount in one file: 1.7 s a chunk of a thousand lines); the two ranges ORed, SQLite walked them too. Two
 * statements, not a UNION ALL of both: PostgreSQL ran that as a parallel append, starting and stopping its workers for
 * each chunk (a million-row intake 30 s longer).
 */
const batchTwinsOn = (side: '<' | '>'): string => `SELECT k.line AS of_line, r.batch_id, r.line, r.external_id, r.phase, r.state, COALESCE(r.created_at, b.received_at) AS at
  FROM row_recipients k
  JOIN recipient_payments t ON t.recipient_key = k.recipient_key AND t.currency = k.currency AND t.amount = k.amount AND t.batch_id ${side} k.batch_id
  JOIN rows r ON r.batch_id = t.batch_id AND r.line = t.line JOIN batches b ON b.id = t.batch_id
  WHERE k.batch_id = ? AND k.line > ? AND k.line <= ? AND ${NOT_UNPAID} AND COALESCE(r.created_at, b.received_at) >= ?`;
const BATCH_TWINS_BEFORE = batchTwinsOn('<');
const BATCH_TWINS_AFTER = batchTwinsOn('>');

export type LineTwin = Twin & { of_line: number };

interface FoundColumns {
  batch_id: string; line: number; external_id: string | null; twin_batch: string; twin_line: number; twin_external_id: string | null;
  twin_state: string; twin_at: string; action: string; detail: string; allowed_by: string | null; allowed_reason: string | null; allowed_at: string | null;
}

/** The twin's one recorded word (findingParams): its state, or its phase before it had one; checked (payout-states.ts). */
const standing = (word: string): { phase: Phase | null; state: string | null } => (isTxState(word) ? { phase: null, state: word } : { phase: phaseOf(word), state: null });

const toFound = (c: FoundColumns): PossibleDuplicate => ({
  batch_id: c.batch_id, line: c.line, external_id: c.external_id, action: c.action, detail: c.detail,
  twin: { batch_id: c.twin_batch, line: c.twin_line, external_id: c.twin_external_id, ...standing(c.twin_state), at: c.twin_at },
  allowed_by: c.allowed_by, allowed_reason: c.allowed_reason, allowed_at: c.allowed_at,
});

type TwinColumns = Omit<Twin, 'phase'> & { phase: string };
const toTwin = <T extends TwinColumns>(row: T): T & Twin => ({ ...row, phase: phaseOf(row.phase) });

export async function twinsOf(c: SqlConnection, query: TwinQuery, since: string, limit: number): Promise<Twin[]> {
  return (await c.all<TwinColumns>(TWINS, [query.key, query.currency, query.amount, query.batch_id, since, limit])).map(toTwin);
}

export async function batchTwins(c: SqlConnection, batchId: string, after: number, upto: number, since: string): Promise<LineTwin[]> {
  const params = [batchId, after, upto, since];
  const twins = [...await c.all<TwinColumns & { of_line: number }>(BATCH_TWINS_BEFORE, params), ...await c.all<TwinColumns & { of_line: number }>(BATCH_TWINS_AFTER, params)];
  return twins.sort((x, y) => x.of_line - y.of_line).map(toTwin);
}

/**
 * Each row's first earlier line of its own batch paying the same: the first entry by payment, whose key ends in the
 * batch and the line, so one step into it a row. (The least of a join was every earlier line a row: a file paying one
 * account one amount ten thousand times took PostgreSQL over 20 s.)
 */
const SAME_BATCH = `SELECT f.of_line, f.line, r.external_id FROM (
    SELECT k.line AS of_line, (SELECT t.line FROM recipient_payments t WHERE t.recipient_key = k.recipient_key AND t.currency = k.currency
      AND t.amount = k.amount AND t.batch_id = k.batch_id AND t.line < k.line ORDER BY t.line LIMIT 1) AS line
    FROM row_recipients k WHERE k.batch_id = ? AND k.line > ? AND k.line <= ?
  ) f JOIN rows r ON r.batch_id = ? AND r.line = f.line ORDER BY f.of_line`;

export async function sameBatchTwins(c: SqlConnection, batchId: string, after: number, upto: number): Promise<SameBatchTwin[]> {
  return c.all<SameBatchTwin>(SAME_BATCH, [batchId, after, upto, batchId]);
}

export async function lastRecipientLine(c: SqlConnection, batchId: string): Promise<number> {
  return Number((await c.first<{ line: number | null }>('SELECT MAX(line) AS line FROM row_recipients WHERE batch_id = ?', [batchId]))?.line ?? 0);
}

/** Lines asked for per statement by rowsAtLines: one statement text, not one for each count of lines. */
const LINES_PER_STATEMENT = 100;
// By the primary key alone: a condition on the phase too lets PostgreSQL walk the batch's rows by rows_batch_phase
// (0.6 s a statement at a million rows, all of them 'checking').
const ROWS_AT = `SELECT line, external_id, phase FROM rows
  WHERE batch_id = ? AND line IN (${Array.from({ length: LINES_PER_STATEMENT }, () => '?').join(', ')}) ORDER BY line`;

/** These lines of a batch (ascending, each once): their external ids and phases, in line order. */
export async function rowsAtLines(c: SqlConnection, batchId: string, lines: readonly number[]): Promise<{ line: number; external_id: string | null; phase: Phase }[]> {
  const found: { line: number; external_id: string | null; phase: Phase }[] = [];
  for (let at = 0; at < lines.length; at += LINES_PER_STATEMENT) {
    const some = lines.slice(at, at + LINES_PER_STATEMENT);
    // The last statement filled up with its last line again: it finds that row once all the same.
    const padded = [...some, ...Array.from({ length: LINES_PER_STATEMENT - some.length }, () => some[some.length - 1])];
    const rows = await c.all<{ line: number; external_id: string | null; phase: string }>(ROWS_AT, [batchId, ...padded]);
    found.push(...rows.map((row) => ({ ...row, phase: phaseOf(row.phase) })));
  }
  return found;
}

export async function possibleDuplicates(c: SqlConnection, batchId: string): Promise<PossibleDuplicate[]> {
  return (await c.all<FoundColumns>('SELECT * FROM possible_duplicates WHERE batch_id = ? ORDER BY line', [batchId])).map(toFound);
}

export async function heldDuplicates(c: SqlConnection, limit: number): Promise<PossibleDuplicate[]> {
  return (await c.all<FoundColumns>(`SELECT d.* FROM possible_duplicates d JOIN rows r ON r.batch_id = d.batch_id AND r.line = d.line
    WHERE r.phase = '${DUPLICATE_HOLD}' ORDER BY d.batch_id, d.line LIMIT ?`, [limit])).map(toFound);
}

export async function endHeldDuplicates(c: SqlConnection, batchId: string, outcome: string | null, detail: string | null): Promise<number> {
  return c.run(`UPDATE rows SET phase = 'not_sent', outcome = ?, outcome_detail = ?, revision = revision + 1 WHERE batch_id = ? AND phase = '${DUPLICATE_HOLD}'`,
    [outcome, detail, batchId]);
}

// The writes each database runs in a transaction of its own: statements and their parameters.

/** Recipient entries go in this many to a statement. */
export const RECIPIENTS_PER_STATEMENT = 100;

/** The statement recording `count` recipient entries; its parameters are recipientParams'. */
export function recordRecipientsStatement(count: number): string {
  return `INSERT INTO row_recipients (batch_id, line, recipient_key, currency, amount) VALUES ${Array.from({ length: count }, () => '(?, ?, ?, ?, ?)').join(', ')}
    ON CONFLICT (batch_id, line) DO UPDATE SET recipient_key = EXCLUDED.recipient_key, currency = EXCLUDED.currency, amount = EXCLUDED.amount`;
}

/**
 * Entries by line written by payment, in that order, never over one already there (so writing them again, after a
 * crash part way, changes nothing more): one statement, where the database has no limit on its log (PostgreSQL);
 * SQLite writes them in chunks (sqlite/payments-in-order.ts). `which`: a condition on row_recipients, or none.
 */
export const paymentsInOrder = (which = ''): string => `INSERT INTO recipient_payments (recipient_key, currency, amount, batch_id, line)
  SELECT recipient_key, currency, amount, batch_id, line FROM row_recipients ${which}
  ORDER BY recipient_key, currency, amount, batch_id, line ON CONFLICT DO NOTHING`;

/** Param: batch. Its entries by payment (DuplicateStore.indexRecipients). */
export const INDEX_PAYMENTS = paymentsInOrder('WHERE batch_id = ?');

export const recipientParams = (batchId: string, entries: readonly RecipientEntry[]): unknown[] =>
  entries.flatMap((e) => [batchId, e.line, e.key, e.currency, e.amount]);

export type Finding = Omit<PossibleDuplicate, 'allowed_by' | 'allowed_reason' | 'allowed_at'>;

/** Findings go in this many to a statement (ten parameters each). */
export const FINDINGS_PER_STATEMENT = 100;

/**
 * The statement keeping `count` findings (of distinct lines); its parameters are findingParams' of each, in order.
 * A finding found again takes the new twin and action; a person's allowance stays.
 */
export function recordFindingsStatement(count: number): string {
  return `INSERT INTO possible_duplicates (batch_id, line, external_id, twin_batch, twin_line, twin_external_id, twin_state, twin_at, action, detail)
  VALUES ${Array.from({ length: count }, () => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')} ON CONFLICT (batch_id, line) DO UPDATE SET twin_batch = EXCLUDED.twin_batch, twin_line = EXCLUDED.twin_line,
  twin_external_id = EXCLUDED.twin_external_id, twin_state = EXCLUDED.twin_state, twin_at = EXCLUDED.twin_at, action = EXCLUDED.action, detail = EXCLUDED.detail`;
}

export const findingParams = (f: Finding): unknown[] =>
  [f.batch_id, f.line, f.external_id, f.twin.batch_id, f.twin.line, f.twin.external_id, f.twin.state ?? f.twin.phase, f.twin.at, f.action, f.detail];

/**
 * Holds `count` lines of a batch being taken in, each with the detail of its finding (recorded first, in the same
 * transaction): a row sendable as stored ('ready'), or waiting for its acceptance ('checking': its external_id looked
 * taken; PostgreSQL stores every row so). Not one whose external_id another row was or will be sent with: the
 * acceptance refuses that one, as before. That row is looked up for each row held (a subquery with its LIMIT, not
 * NOT EXISTS): PostgreSQL made NOT EXISTS an anti-join that read every row held so far for each statement, whose
 * figures, taken before the holds, called the index of submitted external_ids empty (140 ms a statement at 15,000
 * held; 1.4 ms this way). Parameters: holdParams'.
 */
export function holdStatement(count: number): string {
  return `UPDATE rows SET phase = '${DUPLICATE_HOLD}', outcome = ?, revision = revision + 1,
    outcome_detail = (SELECT d.detail FROM possible_duplicates d WHERE d.batch_id = rows.batch_id AND d.line = rows.line)
  WHERE batch_id = ? AND line IN (${Array.from({ length: count }, () => '?').join(', ')}) AND phase IN ${BEFORE_SENDING} AND (
    SELECT 1 FROM rows o WHERE o.external_id = rows.external_id AND o.phase NOT IN ${phaseList(NEVER_SENT_PHASES)} AND NOT (o.batch_id = rows.batch_id AND o.line = rows.line)
    LIMIT 1) IS NULL`;
}

export const holdParams = (batchId: string, lines: readonly number[]): unknown[] => [REASONS.possibleDuplicate, batchId, ...lines];

/**
 * The statements that keep `found`, `per` findings to a statement, in the order to run: each chunk's findings, then
 * its holds (a batch's lines at a time).
 */
export function findingWrites(found: readonly Finding[], per: number): { sql: string; params: unknown[] }[] {
  const writes: { sql: string; params: unknown[] }[] = [];
  for (let at = 0; at < found.length; at += per) {
    const chunk = found.slice(at, at + per);
    writes.push({ sql: recordFindingsStatement(chunk.length), params: chunk.flatMap(findingParams) });
    const holds = new Map<string, number[]>();
    for (const f of chunk) if (f.action === 'hold') holds.set(f.batch_id, [...(holds.get(f.batch_id) ?? []), f.line]);
    for (const [batchId, lines] of holds) writes.push({ sql: holdStatement(lines.length), params: holdParams(batchId, lines) });
  }
  return writes;
}

/** A held row made sendable again by a person: the first statement of an allowance, with (batch, line). */
export const RELEASE_HELD = `UPDATE rows SET phase = 'ready', outcome = NULL, outcome_detail = NULL, revision = revision + 1
  WHERE batch_id = ? AND line = ? AND phase = '${DUPLICATE_HOLD}'`;

/** Who allowed it, why and when: the second, with allowanceParams; it returns the finding. */
export const RECORD_ALLOWANCE = 'UPDATE possible_duplicates SET allowed_by = ?, allowed_reason = ?, allowed_at = ? WHERE batch_id = ? AND line = ? RETURNING *';

export const allowanceParams = (batchId: string, line: number, allowance: Allowance): unknown[] =>
  [allowance.person, allowance.reason, allowance.at, batchId, line];

/** The audit entry of an allowance, from the finding RECORD_ALLOWANCE returned. */
export function allowanceEntry(batchId: string, line: number, allowance: Allowance, found: { external_id: string | null; twin_batch: string; twin_line: number; twin_external_id: string | null } | undefined): NewAuditEntry {
  return {
    at: allowance.at, actor: allowance.person, action: 'duplicate_allowed', subject: `${batchId} line ${line}`,
    details: { reason: allowance.reason, external_id: found?.external_id ?? null, twin: found ? { batch: found.twin_batch, line: found.twin_line, external_id: found.twin_external_id } : null },
  };
}
