/**
 * The fields the store's SQL reads inside a stored request (src/store/request-sql.ts), in both databases, from
 * either form a request is kept in: compact (batch/request-text.ts) and plain JSON (rows stored before it).
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { toPayoutRequest } from '../../src/batch/payout-request.js';
import { requestText } from '../../src/batch/request-text.js';
import type { RequestField } from '../../src/store/request-sql.js';
import { postgresRequestField, sqliteRequestField } from '../../src/store/request-sql.js';
import { ADMIN_URL, postgresAvailable } from '../helpers/postgres.js';
import { validRow } from '../helpers/rows.js';

const request = toPayoutRequest(validRow('ngaCash', { external_id: 'RQ-1', sender_external_id: 'SND-[9]' }), 5_000n);
const FORMS = { compact: requestText(request), json: JSON.stringify(request) };
const EXPECTED: Record<RequestField, string> = { type: 'cash', recipientCountry: 'NGA', senderExternalId: 'SND-[9]' };
const FIELDS = Object.keys(EXPECTED) as RequestField[];

describe('a request field read by SQL', () => {
  it('in SQLite, from either form', () => {
    expect(FORMS.compact.startsWith('[')).toBe(true);
    const db = new Database(':memory:');
    try {
      for (const [form, text] of Object.entries(FORMS)) {
        for (const field of FIELDS) {
          const got = db.prepare(`SELECT ${sqliteRequestField(field, 'r.request')} FROM (SELECT ? AS request) r`).pluck().get(text);
          expect(got, `${form} ${field}`).toBe(EXPECTED[field]);
        }
      }
    } finally {
      db.close();
    }
  });

  it('in PostgreSQL, from either form', async () => {
    if (!(await postgresAvailable('the request fields in PostgreSQL'))) return;
    const client = new pg.Client({ connectionString: ADMIN_URL });
    await client.connect();
    try {
      for (const [form, text] of Object.entries(FORMS)) {
        for (const field of FIELDS) {
          const got = await client.query(`SELECT ${postgresRequestField(field, 'r.request')} AS v FROM (SELECT $1::text AS request) r`, [text]);
          expect(got.rows[0]?.v, `${form} ${field}`).toBe(EXPECTED[field]);
        }
      }
    } finally {
      await client.end();
    }
  });
});
