/**
 * Intake's transactions in SQLite: synchronous, so each is atomic. Rows are
 * stored sendable as they are taken in, their corridors counted then; the
 * batch stays in intake, so nothing of it is sent, until acceptBatch accepts it.
 */
import type { Issue } from '../../validate/issue.js';
import { CorridorCounts } from '../corridor-counts.js';
import { SQLITE_CORRIDORS } from '../corridor-sql.js';
import type { AcceptOutcome, BatchRecord, NewBatch, NewRow, RecipientEntry } from '../port.js';
import { INTAKE_SQL, batchIdStem } from '../queries/intake.js';
import { recipientEntryOf, storedOf } from '../row-record.js';
import { recordRecipientsSqlite } from './duplicates.js';
import { NEVER_SENT } from '../sql-lists.js';
import type { SqliteConnection } from './connection.js';

/** Lines made sendable per transaction when a batch is accepted. */
const ACCEPT_CHUNK_LINES = 5000;

const inIntake = (c: SqliteConnection, batchId: string): boolean => c.sql(INTAKE_SQL.batchStatus).pluck().get(batchId) === 'intake';

export async function beginBatch(c: SqliteConnection, { taken_by: _one_worker, ...batch }: NewBatch): Promise<string> {
  return c.atomic(() => {
    const stem = batchIdStem(batch.received_at, batch.sha256);
    let id = stem;
    for (let n = 2; c.sql('SELECT 1 FROM batches WHERE id = ?').get(id); n++) id = `${stem}-${n}`;
    c.sql(`INSERT INTO batches (id, file_name, sha256, size_bytes, status, policy, received_at, file_mtime_ms, send_after, released)
      VALUES (@id, @file_name, @sha256, @size_bytes, 'intake', @policy, @received_at, @file_mtime_ms, @send_after, 0)`).run({ id, ...batch });
    return id;
  });
}

export async function addRows(c: SqliteConnection, batchId: string, rows: readonly NewRow[]): Promise<void> {
  const insert = c.sql(`INSERT INTO rows (batch_id, line, external_id, request, phase, errors, input_currency, output_amount, output_currency,
    recipient_name, original_batch, original_line, invalid_fields) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  // Sendable as stored, unless its external_id is already taken (by another batch, or by an earlier line of this
  // one): that row waits in 'checking' for the acceptance, which refuses it or makes it ready (see acceptBatch).
  const taken = c.sql(`SELECT 1 FROM rows WHERE external_id = ? AND phase NOT IN ${NEVER_SENT}`).pluck();
  c.atomic(() => {
    // A batch no longer in intake (rejected as interrupted by whoever took the workspace over) gets its last rows
    // as its rejection left the others: not sent.
    const open = inIntake(c, batchId);
    const corridors = new CorridorCounts();
    const recipients: RecipientEntry[] = [];
    for (const row of rows) {
      const stored = storedOf(row);
      const phase = !stored ? 'invalid' : !open ? 'not_sent' : taken.get(row.external_id) === undefined ? 'ready' : 'checking';
      if (phase === 'ready' && stored) corridors.add(stored);
      // Stored sendable: its account recorded with it, for the possible-duplicate check (engine/duplicate-screen.ts).
      const recipient = stored && phase !== 'not_sent' ? recipientEntryOf(row.line, stored) : null;
      if (recipient) recipients.push(recipient);
      insert.run(
        batchId, row.line, row.external_id, stored?.json ?? null, phase, row.errors.length > 0 ? JSON.stringify(row.errors) : null,
        stored?.inputCurrency ?? null, stored?.outputAmount ?? null, stored?.outputCurrency ?? null, stored?.recipientName ?? null,
        row.original?.batch ?? null, row.original?.line ?? null, !stored && row.fields ? JSON.stringify(row.fields) : null,
      );
    }
    const count = c.sql(SQLITE_CORRIDORS.count);
    for (const corridor of corridors.values()) count.run(batchId, corridor.country, corridor.type, corridor.inputCurrency, corridor.outputCurrency, corridor.rows);
    recordRecipientsSqlite(c, batchId, recipients);
    c.sql(INTAKE_SQL.addToTotal).run(rows.length, batchId);
  });
}

export async function invalidateRow(c: SqliteConnection, batchId: string, line: number, error: Issue): Promise<void> {
  c.atomic(() => {
    const row = c.sql('SELECT errors, phase FROM rows WHERE batch_id = ? AND line = ?').get(batchId, line) as { errors: string | null; phase: string } | undefined;
    if (!row) return;
    if (row.phase === 'ready') c.sql(SQLITE_CORRIDORS.uncount).run(batchId, line);
    const errors = [...(row.errors ? (JSON.parse(row.errors) as Issue[]) : []), error];
    c.sql(INTAKE_SQL.invalidate).run(JSON.stringify(errors), batchId, line);
    c.sql(INTAKE_SQL.forgetPayment).run(batchId, line);
    c.sql(INTAKE_SQL.forgetRecipient).run(batchId, line);
  });
}

export async function suspendIntake(c: SqliteConnection, batchId: string): Promise<void> {
  c.atomic(() => {
    if (inIntake(c, batchId)) c.sql("UPDATE rows SET phase = 'checking' WHERE batch_id = ? AND phase = 'ready'").run(batchId);
  });
}

export async function rejectBatch(c: SqliteConnection, batchId: string, reason: string): Promise<boolean> {
  return c.atomic(() => {
    if (c.sql(INTAKE_SQL.reject).run(reason, batchId).changes === 0) return false;
    // Rows made ready by an acceptance cut short (see acceptBatch) end with the rest: nothing of the batch was sent.
    c.sql(INTAKE_SQL.endUnsent).run(batchId);
    return true;
  });
}

export async function withdrawBatch(c: SqliteConnection, batchId: string, outcome: string, reason: string): Promise<boolean> {
  return c.atomic(() => {
    if (c.sql(INTAKE_SQL.anySent).get(batchId)) return false;
    c.sql(INTAKE_SQL.endReady).run(outcome, reason, batchId);
    c.sql(INTAKE_SQL.withdraw).run(reason, batchId);
    return true;
  });
}

/**
 * Here, in chunks of lines, each its own transaction (one over a million rows
 * would put every page of the batch in the write-ahead log at once): the rows
 * left in 'checking' (an external_id taken when stored) are refused when
 * another batch has sent or will send it, else made ready, their corridors
 * added to the batch's summary. The last transaction accepts the batch.
 */
export async function acceptBatch(c: SqliteConnection, batchId: string, options: { refuseSameContent?: boolean } = {}): Promise<AcceptOutcome> {
  const sameContent = (): BatchRecord | undefined => (options.refuseSameContent ? c.sql(INTAKE_SQL.sameContentAccepted).get(batchId) as BatchRecord | undefined : undefined);
  const before = sameContent();
  if (before) return { sameContentAs: before };
  const lastLine = (c.sql('SELECT MAX(line) FROM rows WHERE batch_id = ?').pluck().get(batchId) as number | null) ?? 0;
  for (let after = 0; after < lastLine; after += ACCEPT_CHUNK_LINES) {
    const accepted = c.atomic(() => {
      if (!inIntake(c, batchId)) return false;
      // By the index of phases: only the few rows still checking, not every row of the chunk.
      c.sql(`UPDATE rows INDEXED BY rows_batch_phase SET ${INTAKE_SQL.refuseUsed}
        WHERE batch_id = ? AND line > ? AND line <= ? AND phase = 'checking' AND ${INTAKE_SQL.usedElsewhere('rows')}`)
        .run(batchId, after, after + ACCEPT_CHUNK_LINES);
      // The corridors of the rows made ready, with them (those stored ready were counted as stored): the check
      // before sending reads these, not the rows.
      c.sql(SQLITE_CORRIDORS.summariseChecking).run(batchId, after, after + ACCEPT_CHUNK_LINES);
      c.sql("UPDATE rows INDEXED BY rows_batch_phase SET phase = 'ready' WHERE batch_id = ? AND line > ? AND line <= ? AND phase = 'checking'").run(batchId, after, after + ACCEPT_CHUNK_LINES);
      return true;
    });
    if (!accepted) return null;
    // Between chunks, the rest of the process (a receiver, a console) has its turn.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return c.atomic(() => {
    if (!inIntake(c, batchId)) return null;
    // Again in the transaction that accepts: another copy accepted meanwhile (the write lock is held from here).
    const earlier = sameContent();
    if (earlier) return { sameContentAs: earlier };
    const count = (phase: string): number => (c.sql(INTAKE_SQL.countInPhase).get(batchId, phase) as { n: number }).n;
    const counts = { ready: count('ready'), refused: count('refused'), invalid: count('invalid') };
    c.sql(INTAKE_SQL.accept).run(counts.ready, batchId);
    return counts;
  });
}
