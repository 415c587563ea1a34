/**
 * Intake's transactions in PostgreSQL: rows are stored checking and made ready
 * only by the acceptance, in the transaction that ends the intake, one
 * acceptance at a time across workers.
 */
import type { Issue } from '../../validate/issue.js';
import { PG_CORRIDORS } from '../corridor-sql.js';
import type { AcceptOutcome, BatchRecord, NewBatch, NewRow, StoredRequest } from '../port.js';
import { INTAKE_SQL, batchIdStem } from '../queries/intake.js';
import { recipientEntryOf, storedOf } from '../row-record.js';
import type { PgConnection } from './client.js';
import type { CopyValue } from './copy-text.js';
import { copyLine } from './copy-text.js';

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

/** The columns addRows fills, in the order of copyValues. */
const COPY_COLUMNS = 'batch_id, line, external_id, request, phase, errors, input_currency, output_amount, output_currency, recipient_name, original_batch, original_line, invalid_fields';

function copyValues(batchId: string, row: NewRow, stored: StoredRequest | null): CopyValue[] {
  return [
    batchId, row.line, row.external_id, stored?.json ?? null, stored ? 'checking' : 'invalid',
    row.errors.length > 0 ? JSON.stringify(row.errors) : null,
    stored?.inputCurrency ?? null, stored?.outputAmount ?? null, stored?.outputCurrency ?? null, stored?.recipientName ?? null,
    row.original?.batch ?? null, row.original?.line ?? null, !stored && row.fields ? JSON.stringify(row.fields) : null,
  ];
}

/** The columns of a recipient entry (queries/duplicates.ts recordRecipientsStatement names them so too). */
const RECIPIENT_COLUMNS = 'batch_id, line, recipient_key, currency, amount';

/** A page as COPY text: its rows, and the recipient entries of those stored sendable (a request naming an account). */
function pageText(batchId: string, rows: readonly NewRow[]): { rows: string; recipients: string } {
  const text = { rows: '', recipients: '' };
  for (const row of rows) {
    const stored = storedOf(row);
    text.rows += copyLine(copyValues(batchId, row, stored));
    const entry = stored ? recipientEntryOf(row.line, stored) : null;
    if (entry) text.recipients += copyLine([batchId, entry.line, entry.key, entry.currency, entry.amount]);
  }
  return text;
}

export async function addRows(c: PgConnection, batchId: string, rows: readonly NewRow[]): Promise<void> {
  if (rows.length === 0) return;
  // A page through COPY: its rows streamed as text the server parses as it reads, no statement with a dozen arrays
  // to bind, plan and unnest. Encoded before the transaction begins: a value that cannot be sent fails the page before
  // anything of it is.
  const text = pageText(batchId, rows);
  await c.tx(async (tx) => {
    await tx.copyIn(`COPY rows (${COPY_COLUMNS}) FROM STDIN`, text.rows);
    // Each row stored sendable ('checking' until the acceptance) with its account, for the possible-duplicate check
    // (engine/duplicate-screen.ts): in the same transaction, so a page is recorded with its rows or not at all, and
    // the check reads no row back. A page stored again fails on the rows' key first: no entry is recorded twice.
    if (text.recipients !== '') await tx.copyIn(`COPY row_recipients (${RECIPIENT_COLUMNS}) FROM STDIN`, text.recipients);
    // In the same transaction: a page is stored with its count, or neither is.
    await tx.run(INTAKE_SQL.addToTotal, [rows.length, batchId]);
  });
}

/** Below this many rows, a batch moves the planner's figures too little for a plan to go wrong by much. */
export const ANALYZE_FROM_ROWS = 10_000;

/**
 * After a large batch's rows are stored: without fresh statistics PostgreSQL planned the possible-duplicate holds
 * from figures of before the load (a few rows 'checking' where there were a million), walked the batch's phase index
 * instead of the primary key, and took 0.4 s a statement (docs/performance.md). ANALYZE reads a
 * sample (about a second at a million rows) and blocks no reader or writer.
 */
export async function rowsStored(c: PgConnection, _batchId: string, count: number): Promise<void> {
  if (count >= ANALYZE_FROM_ROWS) await c.run('ANALYZE rows, row_recipients');
}

export async function invalidateRow(c: PgConnection, batchId: string, line: number, error: Issue): Promise<void> {
  await c.tx(async (tx) => {
    const row = await tx.first<{ errors: string | null }>('SELECT errors FROM rows WHERE batch_id = ? AND line = ? FOR UPDATE', [batchId, line]);
    if (!row) return;
    const errors = [...(row.errors ? (JSON.parse(row.errors) as Issue[]) : []), error];
    await tx.run(INTAKE_SQL.invalidate, [JSON.stringify(errors), batchId, line]);
    await tx.run(INTAKE_SQL.forgetPayment, [batchId, line]);
    await tx.run(INTAKE_SQL.forgetRecipient, [batchId, line]);
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

export async function acceptBatch(c: PgConnection, batchId: string, options: { refuseSameContent?: boolean } = {}): Promise<AcceptOutcome> {
  return c.tx(async (tx) => {
    // One acceptance at a time: two batches with the same external_id, or the same content, accepted at once by two
    // workers would both pass the check.
    await tx.lockForTransaction(ACCEPT_LOCK);
    // Only a batch still in intake: one recovered as interrupted meanwhile (by another worker) is not accepted.
    if ((await tx.first<{ status: string }>(`${INTAKE_SQL.batchStatus} FOR UPDATE`, [batchId]))?.status !== 'intake') return null;
    const earlier = options.refuseSameContent ? await tx.first<BatchRecord>(INTAKE_SQL.sameContentAccepted, [batchId]) : undefined;
    if (earlier) return { sameContentAs: earlier };
    const refused = await tx.run(`UPDATE rows SET ${INTAKE_SQL.refuseUsed} WHERE batch_id = ? AND phase = 'checking' AND ${INTAKE_SQL.usedElsewhere('rows')}`, [batchId]);
    const ready = await tx.run("UPDATE rows SET phase = 'ready' WHERE batch_id = ? AND phase = 'checking'", [batchId]);
    // The corridors of the rows made ready, with them: the check before sending reads these, not the rows.
    await tx.run(PG_CORRIDORS.summariseAccepted, [batchId]);
    const invalid = Number((await tx.first<{ n: number }>(INTAKE_SQL.countInPhase, [batchId, 'invalid']))?.n ?? 0);
    await tx.run(INTAKE_SQL.accept, [ready, batchId]);
    return { ready, refused, invalid };
  });
}
