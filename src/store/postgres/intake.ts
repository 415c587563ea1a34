/**
 * Intake's transactions in PostgreSQL: rows are stored checking and made ready
 * only by the acceptance, in the transaction that ends the intake, one
 * acceptance at a time across workers.
 */
import type { Issue } from '../../validate/issue.js';
import { PG_CORRIDORS } from '../corridor-sql.js';
import type { NewBatch, NewRow } from '../port.js';
import { INTAKE_SQL, batchIdStem } from '../queries/intake.js';
import { storedOf } from '../row-record.js';
import type { PgConnection } from './client.js';

const ACCEPT_LOCK = 7_281_922;

export async function beginBatch(c: PgConnection, batch: NewBatch): Promise<string> {
  const stem = batchIdStem(batch.received_at, batch.sha256);
  // The first free id, by insertion: two workers beginning the same content at once get two ids.
  for (let n = 1; ; n++) {
    const id = n === 1 ? stem : `${stem}-${n}`;
    const inserted = await c.run(`INSERT INTO batches (id, file_name, sha256, size_bytes, status, policy, received_at, file_mtime_ms, send_after, released, taken_by)
      VALUES (?, ?, ?, ?, 'intake', ?, ?, ?, ?, 0, ?) ON CONFLICT (id) DO NOTHING`,
    [id, batch.file_name, batch.sha256, batch.size_bytes, batch.policy, batch.received_at, batch.file_mtime_ms, batch.send_after, batch.taken_by ?? null]);
    if (inserted === 1) return id;
  }
}

export async function addRows(c: PgConnection, batchId: string, rows: readonly NewRow[]): Promise<void> {
  if (rows.length === 0) return;
  // One statement per page of rows (arrays unnested), not one round trip per row.
  const stored = rows.map(storedOf);
  const column = <T>(pick: (row: NewRow, index: number) => T): T[] => rows.map(pick);
  await c.tx(async (tx) => {
    await tx.run(`INSERT INTO rows (batch_id, line, external_id, request, phase, errors, input_currency, output_amount, output_currency, recipient_name, original_batch, original_line, invalid_fields)
      SELECT ?, * FROM unnest(?::int[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::int[], ?::text[])`, [
      batchId,
      column((r) => r.line),
      column((r) => r.external_id),
      column((_r, i) => stored[i]?.json ?? null),
      column((_r, i) => (stored[i] ? 'checking' : 'invalid')),
      column((r) => (r.errors.length > 0 ? JSON.stringify(r.errors) : null)),
      column((_r, i) => stored[i]?.inputCurrency ?? null),
      column((_r, i) => stored[i]?.outputAmount ?? null),
      column((_r, i) => stored[i]?.outputCurrency ?? null),
      column((_r, i) => stored[i]?.recipientName ?? null),
      column((r) => r.original?.batch ?? null),
      column((r) => r.original?.line ?? null),
      column((r, i) => (!stored[i] && r.fields ? JSON.stringify(r.fields) : null)),
    ]);
    await tx.run(INTAKE_SQL.addToTotal, [rows.length, batchId]);
  });
}

export async function invalidateRow(c: PgConnection, batchId: string, line: number, error: Issue): Promise<void> {
  await c.tx(async (tx) => {
    const row = await tx.first<{ errors: string | null }>('SELECT errors FROM rows WHERE batch_id = ? AND line = ? FOR UPDATE', [batchId, line]);
    if (!row) return;
    const errors = [...(row.errors ? (JSON.parse(row.errors) as Issue[]) : []), error];
    await tx.run(INTAKE_SQL.invalidate, [JSON.stringify(errors), batchId, line]);
  });
}

export async function rejectBatch(c: PgConnection, batchId: string, reason: string): Promise<boolean> {
  return c.tx(async (tx) => {
    if ((await tx.run(INTAKE_SQL.reject, [reason, batchId])) === 0) return false;
    await tx.run(INTAKE_SQL.endUnsent, [batchId]);
    return true;
  });
}

export async function withdrawBatch(c: PgConnection, batchId: string, outcome: string, reason: string): Promise<boolean> {
  return c.tx(async (tx) => {
    // The batch locked first: a reservation (which locks it too) cannot slip in between the check and the withdrawal.
    await tx.run('SELECT 1 FROM batches WHERE id = ? FOR UPDATE', [batchId]);
    if (await tx.first(INTAKE_SQL.anySent, [batchId])) return false;
    await tx.run(INTAKE_SQL.endReady, [outcome, reason, batchId]);
    await tx.run(INTAKE_SQL.withdraw, [reason, batchId]);
    return true;
  });
}

export async function acceptBatch(c: PgConnection, batchId: string): Promise<{ ready: number; refused: number; invalid: number } | null> {
  return c.tx(async (tx) => {
    // One acceptance at a time: two batches with the same external_id accepted at once by two workers would both pass the check.
    await tx.lockForTransaction(ACCEPT_LOCK);
    // Only a batch still in intake: one recovered as interrupted meanwhile (by another worker) is not accepted.
    if ((await tx.first<{ status: string }>(`${INTAKE_SQL.batchStatus} FOR UPDATE`, [batchId]))?.status !== 'intake') return null;
    const refused = await tx.run(`UPDATE rows SET ${INTAKE_SQL.refuseUsed} WHERE batch_id = ? AND phase = 'checking' AND ${INTAKE_SQL.usedElsewhere('rows')}`, [batchId]);
    const ready = await tx.run("UPDATE rows SET phase = 'ready' WHERE batch_id = ? AND phase = 'checking'", [batchId]);
    // The corridors of the rows made ready, with them: the check before sending reads these, not the rows.
    await tx.run(PG_CORRIDORS.summariseAccepted, [batchId]);
    const invalid = Number((await tx.first<{ n: number }>(INTAKE_SQL.countInPhase, [batchId, 'invalid']))?.n ?? 0);
    await tx.run(INTAKE_SQL.accept, [ready, batchId]);
    return { ready, refused, invalid };
  });
}
