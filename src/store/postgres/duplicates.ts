/**
 * The possible-duplicate queries on PostgreSQL, as sqlite/duplicates.ts
 * does them on SQLite (see engine/duplicates.ts). Functions taking a
 * connection (the pool, or a client inside a transaction); PostgresStore
 * delegates to them.
 */
import type { NewAuditEntry } from '../../audit/chain.js';
import { DUPLICATE_HOLD, REASONS } from '../../payout-states.js';
import { END_HELD, HOLD, NOT_UNPAID } from '../sqlite/duplicates.js';
import type { PgConnection } from './client.js';
import type { Allowance, PossibleDuplicate, RecipientEntry, Twin, TwinQuery } from '../port.js';

const TWINS = `SELECT r.batch_id, r.line, r.external_id, r.phase, r.state, COALESCE(r.created_at, b.received_at) AS at
  FROM row_recipients k JOIN rows r ON r.batch_id = k.batch_id AND r.line = k.line JOIN batches b ON b.id = k.batch_id
  WHERE k.recipient_key = $1 AND k.currency = $2 AND k.amount = $3
    AND k.batch_id <> $4
    AND ${NOT_UNPAID} AND COALESCE(r.created_at, b.received_at) >= $5
  ORDER BY at DESC, r.batch_id, r.line LIMIT $6`;

const BATCH_TWINS = `SELECT k.line AS of_line, r.batch_id, r.line, r.external_id, r.phase, r.state, COALESCE(r.created_at, b.received_at) AS at
  FROM row_recipients k
  JOIN row_recipients t ON t.recipient_key = k.recipient_key AND t.currency = k.currency AND t.amount = k.amount AND t.batch_id <> k.batch_id
  JOIN rows r ON r.batch_id = t.batch_id AND r.line = t.line JOIN batches b ON b.id = t.batch_id
  WHERE k.batch_id = $1 AND k.line > $2 AND k.line <= $3 AND ${NOT_UNPAID} AND COALESCE(r.created_at, b.received_at) >= $4
  ORDER BY k.line`;

export async function batchTwinsPg(on: PgConnection, batchId: string, after: number, upto: number, since: string): Promise<(Twin & { of_line: number })[]> {
  return on.all<Twin & { of_line: number }>(BATCH_TWINS, [batchId, after, upto, since]);
}

interface FoundColumns {
  batch_id: string; line: number; external_id: string | null; twin_batch: string; twin_line: number; twin_external_id: string | null;
  twin_state: string; twin_at: string; action: string; detail: string; allowed_by: string | null; allowed_reason: string | null; allowed_at: string | null;
}

const toFound = (c: FoundColumns): PossibleDuplicate => ({
  batch_id: c.batch_id, line: c.line, external_id: c.external_id, action: c.action, detail: c.detail,
  twin: { batch_id: c.twin_batch, line: c.twin_line, external_id: c.twin_external_id, phase: c.twin_state, state: c.twin_state, at: c.twin_at },
  allowed_by: c.allowed_by, allowed_reason: c.allowed_reason, allowed_at: c.allowed_at,
});

/** Call inside a transaction (the client of one): the entries of a batch, in one statement per hundred. */
export async function recordRecipientsPg(on: PgConnection, batchId: string, entries: readonly RecipientEntry[]): Promise<void> {
  for (let at = 0; at < entries.length; at += 100) {
    const chunk = entries.slice(at, at + 100);
    const values = chunk.map((_, i) => `($1, $${i * 4 + 2}, $${i * 4 + 3}, $${i * 4 + 4}, $${i * 4 + 5})`).join(', ');
    await on.run(`INSERT INTO row_recipients (batch_id, line, recipient_key, currency, amount) VALUES ${values}
      ON CONFLICT (batch_id, line) DO UPDATE SET recipient_key = EXCLUDED.recipient_key, currency = EXCLUDED.currency, amount = EXCLUDED.amount`,
    [batchId, ...chunk.flatMap((e) => [e.line, e.key, e.currency, e.amount])]);
  }
}

export async function twinsOfPg(on: PgConnection, query: TwinQuery, since: string, limit: number): Promise<Twin[]> {
  return (await on.all<Twin>(TWINS, [query.key, query.currency, query.amount, query.batch_id, since, limit])) as Twin[];
}

/** Call inside a transaction: the findings kept, and each `hold` row still ready moved to duplicate_hold. */
export async function recordPossibleDuplicatesPg(on: PgConnection, found: readonly Omit<PossibleDuplicate, 'allowed_by' | 'allowed_reason' | 'allowed_at'>[]): Promise<void> {
  for (const f of found) {
    await on.run(`INSERT INTO possible_duplicates (batch_id, line, external_id, twin_batch, twin_line, twin_external_id, twin_state, twin_at, action, detail)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (batch_id, line) DO UPDATE SET twin_batch = EXCLUDED.twin_batch, twin_line = EXCLUDED.twin_line,
      twin_external_id = EXCLUDED.twin_external_id, twin_state = EXCLUDED.twin_state, twin_at = EXCLUDED.twin_at, action = EXCLUDED.action, detail = EXCLUDED.detail`,
    [f.batch_id, f.line, f.external_id, f.twin.batch_id, f.twin.line, f.twin.external_id, f.twin.state ?? f.twin.phase, f.twin.at, f.action, f.detail]);
    if (f.action === 'hold') {
      await on.run(HOLD, [REASONS.possibleDuplicate, f.detail, f.batch_id, f.line]);
    }
  }
}

export async function possibleDuplicatesPg(on: PgConnection, batchId: string): Promise<PossibleDuplicate[]> {
  return ((await on.all<FoundColumns>('SELECT * FROM possible_duplicates WHERE batch_id = $1 ORDER BY line', [batchId])) as FoundColumns[]).map(toFound);
}

export async function heldDuplicatesPg(on: PgConnection, limit: number): Promise<PossibleDuplicate[]> {
  return ((await on.all<FoundColumns>(`SELECT d.* FROM possible_duplicates d JOIN rows r ON r.batch_id = d.batch_id AND r.line = d.line
    WHERE r.phase = '${DUPLICATE_HOLD}' ORDER BY d.batch_id, d.line LIMIT $1`, [limit])) as FoundColumns[]).map(toFound);
}

export async function endHeldDuplicatesPg(on: PgConnection, batchId: string, outcome: string | null, detail: string | null): Promise<number> {
  return await on.run(END_HELD, [outcome, detail, batchId]);
}

/** Call inside a transaction; `audit` appends to the trail in it. */
export async function allowDuplicatePg(on: PgConnection, batchId: string, line: number, allowance: Allowance, audit: (entry: NewAuditEntry) => Promise<void>): Promise<boolean> {
  const moved = await on.run(`UPDATE rows SET phase = 'ready', outcome = NULL, outcome_detail = NULL, revision = revision + 1
    WHERE batch_id = $1 AND line = $2 AND phase = '${DUPLICATE_HOLD}'`, [batchId, line]);
  if (moved === 0) return false;
  const found = await on.first<FoundColumns>(`UPDATE possible_duplicates SET allowed_by = $1, allowed_reason = $2, allowed_at = $3 WHERE batch_id = $4 AND line = $5 RETURNING *`,
    [allowance.person, allowance.reason, allowance.at, batchId, line]);
  await audit({
    at: allowance.at, actor: allowance.person, action: 'duplicate_allowed', subject: `${batchId} line ${line}`,
    details: { reason: allowance.reason, external_id: found?.external_id ?? null, twin: found ? { batch: found.twin_batch, line: found.twin_line, external_id: found.twin_external_id } : null },
  });
  return true;
}
