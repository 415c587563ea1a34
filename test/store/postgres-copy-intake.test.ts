/**
 * Intake on PostgreSQL through COPY (issue 42): rows holding any text read back
 * as they were given, and a page the server refuses midway leaves neither its
 * rows nor its count.
 */
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PayoutRequest } from '../../src/api/payout-request.js';
import { readRequest } from '../../src/batch/request-text.js';
import { PgConnection } from '../../src/store/postgres/client.js';
import { ANALYZE_FROM_ROWS } from '../../src/store/postgres/intake.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { holdParams, holdStatement } from '../../src/store/queries/duplicates.js';
import type { NewRow } from '../../src/store/port.js';
import { DatabaseUnreachable } from '../../src/errors.js';
import type { FreshDatabase } from '../helpers/postgres.js';
import { freshDatabase, postgresAvailable } from '../helpers/postgres.js';

const available = await postgresAvailable('intake through COPY');

/** Text a CSV can carry that COPY's text format gives a meaning to, or that a careless encoding would lose. */
const AWKWARD = [
  'tab\there', 'line\nbreak', 'carriage\rreturn', 'windows\r\nline', 'back\\slash', 'ends with a backslash\\',
  '\\N', '\\\\N', '\\.', '\\t is not a tab', '\\', '"double" and \'single\' quotes, a comma, a semicolon;',
  'Zoë Ångström, Łódź, 日本語, مرحبا, 🎉👩🏽‍💻', '\u200b\u00a0\u0007\u000b\f', '', ' leading and trailing ',
  '{"json": "in\\ttext", "n": [1, 2]}',
  `${'x'.repeat(300_000)}\t${'\\'.repeat(1_000)}\n${'é'.repeat(100_000)}`,
];

const request = (id: string, firstName: string): PayoutRequest => ({
  external_id: id, type: 'bank', input_currency_code: 'USD', output_currency_code: 'GBP', output_amount_in_cents: '10000',
  sender: { external_id: `S\t${id}` }, recipient: { country_code: 'GBR', first_name: firstName, last_name: 'Last\\Name' },
});

interface Stored {
  line: number; external_id: string | null; request: string | null; phase: string; errors: string | null;
  input_currency: string | null; output_amount: string | null; output_currency: string | null; recipient_name: string | null;
  original_batch: string | null; original_line: number | null; invalid_fields: string | null;
}

describe.skipIf(!available)('PostgreSQL intake through COPY', () => {
  let database: FreshDatabase;
  let store: PostgresStore;
  let db: pg.Client;

  beforeEach(async () => {
    database = await freshDatabase();
    store = await PostgresStore.open(database.url);
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
  });

  afterEach(async () => {
    vi.restoreAllMocks();
    await db.end();
    await store.close();
    await database.drop();
  });

  const begin = (name: string): Promise<string> => store.beginBatch({
    file_name: name, sha256: name.padEnd(64, '0'), size_bytes: 1, policy: 'skip_invalid', received_at: '2026-03-02T09:00:00.000Z', file_mtime_ms: null, send_after: 0,
  });
  const stored = async (batch: string): Promise<Stored[]> => (await db.query<Stored>(
    'SELECT line, external_id, request, phase, errors, input_currency, output_amount, output_currency, recipient_name, original_batch, original_line, invalid_fields FROM rows WHERE batch_id = $1 ORDER BY line', [batch])).rows;
  const total = async (batch: string): Promise<number> => (await db.query<{ rows_total: number }>('SELECT rows_total FROM batches WHERE id = $1', [batch])).rows[0]?.rows_total ?? -1;

  it('stores every text as it was given, in every column it goes to, one COPY a page (and one for its recipient entries)', async () => {
    const copies = vi.spyOn(PgConnection.prototype, 'copyIn');
    const batch = await begin('awkward.csv');
    // Valid rows: the text as their external_id and recipient name, inside their request's JSON; then invalid rows:
    // as their error's message and their fields (JSON), and as the batch of the original a correction names.
    const valid: NewRow[] = AWKWARD.map((text, i) => ({ line: i + 2, external_id: text, request: request(`E${i}`, text), errors: [] }));
    const invalid: NewRow[] = AWKWARD.map((text, i) => ({
      line: AWKWARD.length + i + 2, external_id: null, request: null,
      errors: [{ line: AWKWARD.length + i + 2, column: 'recipient_first_name', code: 'required', message: text }],
      // The original's batch is indexed (rows_original): a key of at most a few kB.
      original: { batch: text.slice(0, 500), line: i }, fields: { recipient_first_name: text },
    }));
    // Stored as the stores take a row checked on a worker thread: every column its text, JSON or not (its own batch:
    // the store would not read that back as a request).
    const given: NewRow = { line: 1, external_id: '\\N', request: null, errors: [], stored: {
      json: 'not\tJSON\\', inputCurrency: 'U\nSD', outputAmount: '\\.', outputCurrency: '\r', recipientName: '', recipientKey: 'iban:\\N\t\n', country: null, type: 'bank',
    } };
    const raw = await begin('raw.csv');
    await store.addRows(batch, valid);
    await store.addRows(batch, invalid);
    await store.addRows(raw, [given]);

    // A COPY for each page's rows, and one for the recipient entries of the page that has any (the raw row's).
    expect(copies).toHaveBeenCalledTimes(4);
    expect((await db.query('SELECT line, recipient_key, currency, amount FROM row_recipients WHERE batch_id = $1', [raw])).rows)
      .toEqual([{ line: 1, recipient_key: 'iban:\\N\t\n', currency: '\r', amount: '\\.' }]);
    expect(await stored(raw)).toEqual([{
      line: 1, external_id: '\\N', request: 'not\tJSON\\', phase: 'checking', errors: null, input_currency: 'U\nSD', output_amount: '\\.',
      output_currency: '\r', recipient_name: '', original_batch: null, original_line: null, invalid_fields: null,
    }]);
    expect(await total(raw)).toBe(1);
    const rows = await stored(batch);
    expect(rows).toHaveLength(2 * AWKWARD.length);
    AWKWARD.forEach((text, i) => {
      const row = rows[i] as Stored;
      expect(row.external_id).toBe(text);
      expect(row.recipient_name).toBe(text === '' ? 'Last\\Name' : `${text} Last\\Name`);
      expect(readRequest(row.request as string)).toEqual(request(`E${i}`, text));
      expect([row.phase, row.errors, row.original_batch, row.invalid_fields]).toEqual(['checking', null, null, null]);
      const wrong = rows[AWKWARD.length + i] as Stored;
      expect([wrong.external_id, wrong.request, wrong.phase, wrong.original_batch, wrong.original_line]).toEqual([null, null, 'invalid', text.slice(0, 500), i]);
      expect(JSON.parse(wrong.errors as string)).toEqual(invalid[i]?.errors);
      expect(JSON.parse(wrong.invalid_fields as string)).toEqual({ recipient_first_name: text });
    });
    expect(await total(batch)).toBe(2 * AWKWARD.length);
    // And as the store reads them.
    const read = [];
    for await (const row of store.rows(batch)) read.push(row);
    expect(read.slice(0, AWKWARD.length).map((row) => [row.external_id, row.request])).toEqual(valid.map((row) => [row.external_id, row.request]));
  });

  it('stores nothing of a page, and counts none of it, when the server refuses a row in the middle of its COPY', async () => {
    const batch = await begin('refused.csv');
    const page = (from: number, count: number): NewRow[] => Array.from({ length: count }, (_, i) => ({ line: from + i, external_id: `R${from + i}`, request: request(`R${from + i}`, 'Ada'), errors: [] }));
    await store.addRows(batch, page(1, 250));
    // Line 300 twice, midway through the second page: the rows' key refuses the second.
    const refused = [...page(251, 100), { ...page(300, 1)[0] as NewRow, external_id: 'again' }, ...page(351, 149)];
    const failure = await store.addRows(batch, refused).then(() => null, (error: unknown) => error);
    expect(failure).toMatchObject({ code: '23505' });
    expect(failure).not.toBeInstanceOf(DatabaseUnreachable);
    expect((await stored(batch)).map((row) => row.line)).toEqual(page(1, 250).map((row) => row.line));
    expect(await total(batch)).toBe(250);

    // A batch whose first page is refused: nothing at all. The store goes on (its connection given back whole).
    const other = await begin('other.csv');
    await expect(store.addRows(other, [...page(1, 10), ...page(5, 1)])).rejects.toMatchObject({ code: '23505' });
    expect(await stored(other)).toEqual([]);
    expect(await total(other)).toBe(0);
    await store.addRows(other, page(1, 3));
    expect((await stored(other)).map((row) => row.line)).toEqual([1, 2, 3]);
    expect(await total(other)).toBe(3);
  });

  it('brings the planner\'s figures up to date once a large batch is stored: the holds of a hundred lines go by the primary key', async () => {
    const batch = await begin('large.csv');
    const rows = ANALYZE_FROM_ROWS;
    for (let from = 1; from <= rows; from += 1000) {
      await store.addRows(batch, Array.from({ length: 1000 }, (_, i) => ({ line: from + i, external_id: `L${from + i}`, request: request(`L${from + i}`, 'Ada'), errors: [] })));
    }
    const estimated = async (table: string): Promise<number> => Number((await db.query<{ n: number }>('SELECT reltuples AS n FROM pg_class WHERE relname = $1', [table])).rows[0]?.n);
    // A small batch leaves the figures as they were (a table never analysed: -1).
    await store.rowsStored(batch, rows - 1);
    expect(await estimated('rows')).toBe(-1);
    await store.rowsStored(batch, rows);
    expect(await estimated('rows')).toBe(rows);
    // Analysed too (these requests name no account: it holds none).
    expect(await estimated('row_recipients')).toBe(0);
    const lines = Array.from({ length: 100 }, (_, i) => 2 * i + 501);
    let n = 0;
    const hold = holdStatement(lines.length).replace(/\?/g, () => `$${++n}`);
    const plan = (await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${hold}`, holdParams(batch, lines))).rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(plan).toContain('rows_pkey');
    expect(plan).not.toContain('rows_batch_phase');
  });

  it('holds a row after thousands held since the figures were taken by looking its external_id up, not by a pass over every row held', async () => {
    const batch = await begin('resent.csv');
    const rows = ANALYZE_FROM_ROWS;
    for (let from = 1; from <= rows; from += 1000) {
      await store.addRows(batch, Array.from({ length: 1000 }, (_, i) => ({ line: from + i, external_id: `S${from + i}`, request: request(`S${from + i}`, 'Ada'), errors: [] })));
    }
    await store.rowsStored(batch, rows);
    // A file sent again under new external_ids: every row a possible duplicate, held a hundred at a time. Each row
    // held joins the index of submitted external_ids, which the figures taken before the holds call empty.
    await db.query("UPDATE rows SET phase = 'duplicate_hold' WHERE batch_id = $1 AND line <= 8000", [batch]);
    const lines = Array.from({ length: 100 }, (_, i) => 8001 + i);
    let n = 0;
    const hold = holdStatement(lines.length).replace(/\?/g, () => `$${++n}`);
    const plan = (await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${hold}`, holdParams(batch, lines))).rows.map((r) => r['QUERY PLAN']).join('\n');
    // As an anti-join the rows held were read whole for each statement and compared with each of its hundred rows:
    // 140 ms a statement at 15,000 held, a million-row file sent again hours.
    expect(plan).toMatch(/Index Cond: \(external_id = rows\.external_id\)/);
    expect(plan).not.toContain('Materialize');
  });
});
