/**
 * The result file of a batch: one row per input line, in input order, with its
 * state and reason, written atomically (a temporary file, then a rename) so a
 * reader never sees half of it. Text a spreadsheet would run as a formula is
 * neutralised, except real numbers and E.164 phone numbers. The same cells can
 * go to a workbook too (BATCH.results.xlsx: reports.results_xlsx).
 */
import { once } from 'node:events';
import { openSafely, writeFileSafely } from '../workspace/safe-files.js';
import { join } from 'node:path';
import { stringify } from 'csv-stringify';
import type { Cell, CsvOptions } from './cells.js';
import { csvField, instant, integer, major, minor, text } from './cells.js';
import type { SheetColumn, Table, WorkbookFile } from './workbook.js';
import { openWorkbook } from './workbook.js';
import type { ResultRow } from '../store/port.js';

import { adviceFor } from './advice.js';
import { NEVER_SENT_PHASES, isEndedUnsent, isNotCreatedYet } from '../payout-states.js';
import type { RowFields } from '../validate/fields.js';
import { currencyDecimals, parseMajorAmount } from '../validate/money.js';

export { neutralise } from './cells.js';

/**
 * The result file's columns, in order: first what a person reads (who, how
 * much in major units, what became of it, why, when), then what machines read
 * (the line, the transaction, the reason's code, minor units). Readers find
 * columns by name. docs/batch-files.md ("The results file") says what each holds.
 */
export const RESULT_COLUMNS = [
  'external_id', 'recipient_name', 'output_amount', 'output_currency', 'state', 'state_reason', 'final_at',
  'line', 'transaction_id', 'state_reason_code', 'input_amount', 'input_currency',
  'output_amount_in_cents', 'input_amount_in_cents', 'error', 'corrects',
  // Added after the others, so that a reader by position finds them where they were.
  'next_step',
] as const;

/** The workbook's column widths, in characters, where the header's would be too narrow for what the column holds. */
const WIDTHS: Partial<Record<(typeof RESULT_COLUMNS)[number], number>> = {
  external_id: 20, transaction_id: 24, state_reason: 40, error: 50, recipient_name: 28, final_at: 20, corrects: 24, next_step: 60,
};
const SHEET_COLUMNS: SheetColumn[] = RESULT_COLUMNS.map((header) => ({ header, width: WIDTHS[header] ?? Math.max(12, header.length + 2) }));

/** The state a person reads: the service's state, or what paybatch decided when nothing was sent or an answer was not trusted. */
export function resultState(row: ResultRow): string {
  if (row.phase === 'invalid') return 'invalid';
  if (isEndedUnsent(row.phase)) return row.outcome ?? 'not_sent';
  // Held: the service's word about this row is not trusted, so its state is not shown as the row's.
  if (row.phase === 'held') return row.outcome ?? 'held';
  if (isNotCreatedYet(row.phase)) return 'not_sent_yet';
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
  if (row.outcome && !isEndedUnsent(row.phase) && row.state !== null) parts.push(row.outcome);
  if (row.errors) {
    for (const e of JSON.parse(row.errors) as { column: string; code: string; message: string }[]) parts.push(`${e.column}: ${e.code}: ${e.message}`);
  }
  return parts.join(' | ');
}

/** A correction names the row it pays again as BATCH:LINE. */
const corrects = (row: ResultRow): string | null => (row.original_batch && row.original_line !== null ? `${row.original_batch}:${row.original_line}` : null);

const NEVER_SENT: ReadonlySet<string> = new Set(NEVER_SENT_PHASES);

/** What an invalid row said it would pay, and to whom, from its fields as read: its amount as written when it is not a valid one. */
function asWritten(row: ResultRow): { amount: Cell; currency: string | null; name: string | null } | null {
  if (!row.invalid_fields || row.output_amount !== null) return null;
  const fields = JSON.parse(row.invalid_fields) as RowFields;
  const currency = fields.output_currency_code ?? null;
  const decimals = currency ? currencyDecimals(currency) : undefined;
  const written = fields.output_amount;
  const parsed = written !== undefined && decimals !== undefined ? parseMajorAmount(written, decimals) : null;
  const cents = fields.output_amount_in_cents;
  const amount = parsed?.ok ? major(parsed.minor, currency) : written !== undefined ? text(written)
    : cents !== undefined && /^\d{1,18}$/.test(cents) ? major(cents, currency) : text(cents);
  const name = [fields.recipient_first_name, fields.recipient_last_name].filter((part) => part !== undefined && part !== '').join(' ');
  return { amount, currency, name: name === '' ? null : name };
}

/**
 * A row of the result file as typed cells, in RESULT_COLUMNS order. `batchId` names the batch in the next step's
 * commands (without it, they say BATCH).
 */
export function resultCells(row: ResultRow, batchId?: string): Cell[] {
  const { reason, code } = resultReason(row);
  const written = asWritten(row);
  const finalAt = row.settled_at ?? (NEVER_SENT.has(row.phase) ? row.batch_time ?? null : null);
  return [
    text(row.external_id), text(row.recipient_name ?? written?.name), written ? written.amount : major(row.output_amount, row.output_currency),
    text(row.output_currency ?? written?.currency), text(resultState(row)), text(reason), instant(finalAt),
    integer(row.line), text(row.transaction_id), text(code), major(row.input_amount, row.input_currency), text(row.input_currency),
    minor(row.output_amount), minor(row.input_amount), text(errorText(row)), text(corrects(row)),
    // What a person does next, as status and the attention page say it: never to pay again what may still pay out.
    text(adviceFor(row, batchId)),
  ];
}

/** A row of the result file, in RESULT_COLUMNS order, neutralised for spreadsheets. */
export function resultRecord(row: ResultRow, options: CsvOptions = {}, batchId?: string): string[] {
  return resultCells(row, batchId).map((cell) => csvField(cell, options));
}

export interface ResultFileOptions {
  /** Also write BATCH.results.xlsx beside the CSV, from the same rows in the same pass. */
  xlsx?: boolean;
}

const resultsWorkbookName = (batchId: string): string => `${batchId}.results.xlsx`;

/** The result file as a workbook's sheet: the results' own workbook, or a batch's reconciliation. */
export function resultsTable(rows: Iterable<ResultRow>, batchId?: string): Table {
  function* cells(): Iterable<Cell[]> {
    for (const row of rows) yield resultCells(row, batchId);
  }
  return { name: 'results', columns: SHEET_COLUMNS, rows: cells() };
}

/**
 * Writes the result file under `outbox` (inside the workspace `home`), never
 * through a link, 0600; with `xlsx`, the workbook beside it from the same pass
 * over the rows. Returns the CSV's path.
 */
export async function writeResults(
  home: string, outbox: string, batchId: string, rows: AsyncIterable<ResultRow> | Iterable<ResultRow>, options: ResultFileOptions = {},
): Promise<string> {
  const file = join(outbox, `${batchId}.results.csv`);
  const out = await openSafely(home, file);
  const csv = stringify({ header: true, columns: [...RESULT_COLUMNS] });
  csv.pipe(out.stream, { end: false });
  let book: WorkbookFile | null = null;
  try {
    book = options.xlsx ? await openWorkbook(home, join(outbox, resultsWorkbookName(batchId))) : null;
    const sheet = book ? book.sheet('results', SHEET_COLUMNS) : null;
    for await (const row of rows) {
      const cells = resultCells(row, batchId);
      if (!csv.write(cells.map((cell) => csvField(cell)))) await once(csv, 'drain');
      await sheet?.add(cells);
    }
    csv.end();
    await once(csv, 'end');
  } catch (error) {
    csv.unpipe(out.stream);
    await out.abandon();
    await book?.abandon();
    throw error;
  }
  await out.commit();
  // The CSV is in place whatever happens to the workbook: other features read it.
  await book?.commit().catch(async (error: unknown) => {
    await book?.abandon();
    throw error;
  });
  return file;
}

export async function writeSummary(home: string, outbox: string, batchId: string, summary: unknown): Promise<string> {
  const file = join(outbox, `${batchId}.summary.json`);
  await writeFileSafely(home, file, `${JSON.stringify(summary, null, 2)}\n`);
  return file;
}
