/**
 * The result file of a batch: one row per input line, in input order, with its
 * state and reason, written atomically (a temporary file, then a rename) so a
 * reader never sees half of it. Text a spreadsheet would run as a formula is
 * neutralised, except real numbers and E.164 phone numbers.
 */
import { once } from 'node:events';
import { openSafely, writeFileSafely } from '../workspace/safe-files.js';
import { join } from 'node:path';
import { stringify } from 'csv-stringify';

export const RESULT_COLUMNS = [
  'line', 'external_id', 'transaction_id', 'state', 'state_reason', 'state_reason_code',
  'input_amount_in_cents', 'input_currency', 'output_amount_in_cents', 'output_currency', 'error',
] as const;

/** CSV formula injection: =, +, -, @ (and tab, carriage return) at the start make a spreadsheet evaluate the cell. */
export function neutralise(value: string): string {
  if (!/^[=+\-@\t\r]/.test(value)) return value;
  if (/^[+-]?\d+(\.\d+)?$/.test(value) || /^\+[1-9]\d{6,14}$/.test(value)) return value;
  return `'${value}`;
}

export interface ResultRow {
  line: number;
  external_id: string | null;
  transaction_id: string | null;
  phase: string;
  outcome: string | null;
  /** paybatch's reason in words, when paybatch ended the row: which limit, and both amounts. */
  outcome_detail: string | null;
  state: string | null;
  state_reason: string | null;
  state_reason_code: string | null;
  input_amount: string | null;
  input_currency: string | null;
  output_amount: string | null;
  output_currency: string | null;
  /** When the funding was recorded; null while unfunded. */
  funded_at: string | null;
  errors: string | null;
}

/** The state a person reads: the service's state, or what paybatch decided when nothing was sent or an answer was not trusted. */
export function resultState(row: ResultRow): string {
  if (row.phase === 'invalid') return 'invalid';
  if (row.phase === 'refused' || row.phase === 'not_sent') return row.outcome ?? 'not_sent';
  // Held: the service's word about this row is not trusted, so its state is not shown as the row's.
  if (row.phase === 'held') return row.outcome ?? 'held';
  if (row.phase === 'ready' || row.phase === 'creating') return 'not_sent_yet';
  // Ended without a transaction (the service refused the create): what paybatch recorded.
  return row.state ?? row.outcome ?? 'unknown';
}

/**
 * The reason a person reads, and its code: paybatch's own when paybatch ended the
 * row (which limit, both amounts), else the service's [2.5].
 */
export function resultReason(row: ResultRow): { reason: string; code: string } {
  if (row.outcome !== null && row.outcome_detail !== null) return { reason: row.outcome_detail, code: row.outcome };
  return { reason: row.state_reason ?? '', code: row.state_reason_code ?? '' };
}

function errorText(row: ResultRow): string {
  const parts: string[] = [];
  if (row.outcome && row.phase !== 'refused' && row.phase !== 'not_sent' && row.state !== null) parts.push(row.outcome);
  if (row.errors) {
    for (const e of JSON.parse(row.errors) as { column: string; code: string; message: string }[]) parts.push(`${e.column}: ${e.code}: ${e.message}`);
  }
  return parts.join(' | ');
}

/** A row of the result file, in RESULT_COLUMNS order, neutralised for spreadsheets. */
export function resultRecord(row: ResultRow): string[] {
  const { reason, code } = resultReason(row);
  return [
    String(row.line), row.external_id ?? '', row.transaction_id ?? '', resultState(row), reason, code,
    row.input_amount ?? '', row.input_currency ?? '', row.output_amount ?? '', row.output_currency ?? '', errorText(row),
  ].map(neutralise);
}

/** Writes the result file under `outbox` (inside the workspace `home`), never through a link, 0600. */
export async function writeResults(home: string, outbox: string, batchId: string, rows: AsyncIterable<ResultRow> | Iterable<ResultRow>): Promise<string> {
  const file = join(outbox, `${batchId}.results.csv`);
  const out = await openSafely(home, file);
  const csv = stringify({ header: true, columns: [...RESULT_COLUMNS] });
  csv.pipe(out.stream, { end: false });
  for await (const row of rows) {
    if (!csv.write(resultRecord(row))) await once(csv, 'drain');
  }
  csv.end();
  await once(csv, 'end');
  await out.commit();
  return file;
}

export async function writeSummary(home: string, outbox: string, batchId: string, summary: unknown): Promise<string> {
  const file = join(outbox, `${batchId}.summary.json`);
  await writeFileSafely(home, file, `${JSON.stringify(summary, null, 2)}\n`);
  return file;
}
