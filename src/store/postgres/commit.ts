/**
 * A decision applied in PostgreSQL: the row changed only at the revision read
 * (compare-and-set in the UPDATE's own WHERE, which locks the row), with the
 * funding reservation, the count of a state learned and the audit entries in
 * the same transaction; a change that needs none of them is one statement.
 * The rules themselves are not here.
 */
import type { CommitOutcome, RowChanges, RowPatch } from '../port.js';
import { CHANGEABLE, PIPELINE_SQL, storedValue } from '../queries/pipeline.js';
import { appendAuditIn } from './audit.js';
import { reservationRefused } from './budget.js';
import type { PgConnection } from './client.js';
import { COUNT_LEARNED } from './learned.js';

/** A commit refused after its row was changed: the transaction is rolled back, and this is what came of it. */
class RefusedCommit extends Error {
  constructor(readonly outcome: CommitOutcome) {
    super(outcome.kind);
  }
}

export async function commitRow(c: PgConnection, batchId: string, line: number, revision: number, patch: RowPatch): Promise<CommitOutcome> {
  try {
    return await commitRowOnce(c, batchId, line, revision, patch);
  } catch (error) {
    if (error instanceof RefusedCommit) return error.outcome;
    // The unique index refused a transaction id another row holds (or another worker's row took in the same instant):
    // nothing of the commit was kept.
    if ((error as { code?: string; constraint?: string }).code === '23505' && (error as { constraint?: string }).constraint === 'rows_transaction_id' && patch.changes.transaction_id) {
      const other = await c.first<{ batch_id: string; line: number }>(PIPELINE_SQL.otherHolder, [patch.changes.transaction_id, batchId, line]);
      if (other) return { kind: 'taken', ...other };
    }
    throw error;
  }
}

async function commitRowOnce(c: PgConnection, batchId: string, line: number, revision: number, patch: RowPatch): Promise<CommitOutcome> {
  const { changes } = patch;
  const countRead = patch.countRead === true;
  // Nothing but the row's own columns (a read's schedule, the time heard): one statement, committed on its own.
  if (!patch.reserve && !patch.learned && !changes.transaction_id && (patch.audits ?? []).length === 0) {
    return (await update(c, batchId, line, revision, changes, countRead)) === undefined ? { kind: 'moved' } : { kind: 'applied' };
  }
  return c.tx(async (tx): Promise<CommitOutcome> => {
    const before = await update(tx, batchId, line, revision, changes, countRead);
    if (before === undefined) return { kind: 'moved' };
    if (patch.reserve) {
      const refusal = await reservationRefused(tx, batchId, line, patch.reserve);
      if (refusal) throw new RefusedCommit(refusal);
    }
    if (patch.learned && changes.state !== undefined && changes.state !== before.state) await tx.run(COUNT_LEARNED[patch.learned], [batchId]);
    for (const audit of patch.audits ?? []) {
      await appendAuditIn(tx, { at: audit.at, actor: audit.actor ?? 'paybatch', action: audit.action, subject: `${batchId} line ${line}`, details: audit.details });
    }
    return { kind: 'applied' };
  });
}

/**
 * The changes applied if the row is at `revision` (the UPDATE takes the row's lock, and a row moved by a commit that
 * held it first no longer matches): the state it had before them; undefined when it moved. A revision is changed by
 * every commit, and only a commit changes a state: the state at a revision is one (and a row whose state is no longer
 * the one read, whatever changed it, has moved).
 */
async function update(c: PgConnection, batchId: string, line: number, revision: number, changes: RowChanges, countRead: boolean): Promise<{ state: string | null } | undefined> {
  const columns = CHANGEABLE.filter((column) => column in changes);
  const values = columns.map((column) => storedValue(column, (changes as Record<string, unknown>)[column]));
  const set = [...columns.map((column) => `${column} = ?`), 'revision = r.revision + 1', ...(countRead ? ['reads = r.reads + 1'] : [])].join(', ');
  return c.first<{ state: string | null }>(`UPDATE rows r SET ${set} FROM (SELECT state FROM rows WHERE batch_id = ? AND line = ?) AS was
    WHERE r.batch_id = ? AND r.line = ? AND r.revision = ? AND r.state IS NOT DISTINCT FROM was.state RETURNING was.state`, [...values, batchId, line, batchId, line, revision]);
}
