/**
 * A decision applied in PostgreSQL: the row locked (FOR UPDATE) and changed
 * only at the revision read, with the funding reservation checked in the same
 * transaction. The rules themselves are not here.
 */
import type { CommitOutcome, RowChanges, RowPatch } from '../port.js';
import { CHANGEABLE, PIPELINE_SQL, storedValue } from '../queries/pipeline.js';
import { appendAuditIn } from './audit.js';
import { reservationRefused } from './budget.js';
import type { PgConnection } from './client.js';
import { COUNT_LEARNED } from './learned.js';

export async function commitRow(c: PgConnection, batchId: string, line: number, revision: number, patch: RowPatch): Promise<CommitOutcome> {
  try {
    return await commitRowOnce(c, batchId, line, revision, patch);
  } catch (error) {
    // The unique index refused a transaction id another row took in the same instant (another worker).
    if ((error as { code?: string; constraint?: string }).code === '23505' && (error as { constraint?: string }).constraint === 'rows_transaction_id' && patch.changes.transaction_id) {
      const other = await c.first<{ batch_id: string; line: number }>('SELECT batch_id, line FROM rows WHERE transaction_id = ?', [patch.changes.transaction_id]);
      if (other) return { kind: 'taken', ...other };
    }
    throw error;
  }
}

async function commitRowOnce(c: PgConnection, batchId: string, line: number, revision: number, patch: RowPatch): Promise<CommitOutcome> {
  return c.tx(async (tx): Promise<CommitOutcome> => {
    const now = await tx.first<{ revision: number; state: string | null }>('SELECT revision, state FROM rows WHERE batch_id = ? AND line = ? FOR UPDATE', [batchId, line]);
    if (!now || now.revision !== revision) return { kind: 'moved' };
    const { changes } = patch;
    if (changes.transaction_id) {
      const other = await tx.first<{ batch_id: string; line: number }>(PIPELINE_SQL.otherHolder, [changes.transaction_id, batchId, line]);
      if (other) return { kind: 'taken', ...other };
    }
    if (patch.reserve) {
      const refusal = await reservationRefused(tx, batchId, line, patch.reserve);
      if (refusal) return refusal;
    }
    await update(tx, batchId, line, changes, patch.countRead === true);
    if (patch.learned && changes.state !== undefined && changes.state !== now.state) await tx.run(COUNT_LEARNED[patch.learned], [batchId]);
    for (const audit of patch.audits ?? []) {
      await appendAuditIn(tx, { at: audit.at, actor: audit.actor ?? 'paybatch', action: audit.action, subject: `${batchId} line ${line}`, details: audit.details });
    }
    return { kind: 'applied' };
  });
}

/** The row is locked at the revision read: the changes are applied as they are. */
async function update(tx: PgConnection, batchId: string, line: number, changes: RowChanges, countRead: boolean): Promise<void> {
  const columns = CHANGEABLE.filter((column) => column in changes);
  const values = columns.map((column) => storedValue(column, (changes as Record<string, unknown>)[column]));
  const set = [...columns.map((column) => `${column} = ?`), 'revision = revision + 1', ...(countRead ? ['reads = reads + 1'] : [])].join(', ');
  await tx.run(`UPDATE rows SET ${set} WHERE batch_id = ? AND line = ?`, [...values, batchId, line]);
}
