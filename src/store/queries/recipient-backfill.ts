/**
 * The recipient accounts of rows stored before the possible-duplicate check
 * existed (SQLite migration 16, PostgreSQL 10): without them such a row is
 * nobody's twin, and a later file paying the same account is not caught. At
 * open, once per database (data_backfills remembers it is done), every row
 * sent or to be sent that has no entry gets one, its key made from its stored
 * request by the same normalisation intake uses (validate/recipient-key.ts).
 *
 * In pages of PAGE rows, by the primary key (constant memory whatever the
 * size), each page written in one statement that never overwrites an entry
 * (so running twice, or beside an intake, or on two workers at once, changes
 * nothing more). Statements and the pure step here; each database runs the
 * loop (sqlite/recipient-backfill.ts, postgres/recipient-backfill.ts).
 */
import { recipientKey } from '../../validate/recipient-key.js';
import { NEVER_SENT } from '../sql-lists.js';
import { paymentsInOrder } from './duplicates.js';
import { readRequest } from '../../batch/request-text.js';

export const BACKFILL_NAME = 'row_recipients';
/**
 * The entries by payment (recipient_payments, SQLite 22, PostgreSQL 17) of the entries kept before the table, filled
 * once per database at open, after the backfill above: every entry by line written by payment, never over one there.
 */
export const PAYMENTS_BACKFILL_NAME = 'recipient_payments';

/** No param. The fill of recipient_payments in one statement, where the database has no bound on its log (PostgreSQL). */
export const FILL_PAYMENTS = paymentsInOrder();
/** Rows per page: read, keyed and written together. */
export const PAGE = 500;

/** Param: name. A row when the backfill is done. */
export const BACKFILL_DONE = 'SELECT name FROM data_backfills WHERE name = ?';

/** Params: name, at. */
export const MARK_DONE = 'INSERT INTO data_backfills (name, done_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING';

/** Params: batch, line (the last of the page before). The next page of rows with a request and no entry, sent or to be sent. */
export const PAGE_WITHOUT_ENTRY = `SELECT r.batch_id, r.line, r.request FROM rows r
  WHERE (r.batch_id, r.line) > (?, ?) AND r.request IS NOT NULL AND r.phase NOT IN ${NEVER_SENT}
    AND NOT EXISTS (SELECT 1 FROM row_recipients k WHERE k.batch_id = r.batch_id AND k.line = r.line)
  ORDER BY r.batch_id, r.line LIMIT ${PAGE}`;

export interface StoredRequest {
  batch_id: string;
  line: number;
  request: string;
}

/**
 * The statements writing `count` entries, by line and by payment (where twins are looked for), never over one
 * already there; both with the same parameters, in one transaction: a row given its entry by line is never looked at
 * again.
 */
export function insertEntriesStatements(count: number): [string, string] {
  const values = Array.from({ length: count }, () => '(?, ?, ?, ?, ?)').join(', ');
  return [
    `INSERT INTO row_recipients (batch_id, line, recipient_key, currency, amount) VALUES ${values} ON CONFLICT (batch_id, line) DO NOTHING`,
    `INSERT INTO recipient_payments (batch_id, line, recipient_key, currency, amount) VALUES ${values} ON CONFLICT DO NOTHING`,
  ];
}

/** The entries of a page, as parameters of insertEntriesStatements (rows naming no account have none), and how many. */
export function entriesOfPage(page: readonly StoredRequest[]): { params: unknown[]; count: number } {
  const params: unknown[] = [];
  let count = 0;
  for (const row of page) {
    const request = readRequest(row.request);
    const key = recipientKey(request);
    if (key === null) continue;
    params.push(row.batch_id, row.line, key, request.output_currency_code, request.output_amount_in_cents);
    count += 1;
  }
  return { params, count };
}

/** Where the next page starts: after the last row of this one. */
export const pageEnd = (page: readonly StoredRequest[]): [string, number] => {
  const last = page[page.length - 1] as StoredRequest;
  return [last.batch_id, last.line];
};

