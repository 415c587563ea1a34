/**
 * Queries the daemon runs on events, answered by index whatever the batch's
 * size: SQLite has no statistics on paybatch's tables, so a plan is chosen by
 * the schema alone, the same on an empty database as on a million rows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';

/** Every statement the store prepares from now on (`seen`), and the database's own prepare, to ask for their plans. */
function recordStatements(store: SqliteStore): { prepare: Database.Database['prepare']; seen: string[] } {
  const db = (store as unknown as { db: Database.Database }).db;
  const prepare = db.prepare.bind(db);
  const seen: string[] = [];
  db.prepare = ((sql: string) => {
    seen.push(sql);
    return prepare(sql);
  }) as typeof db.prepare;
  return { prepare, seen };
}

describe('plans of the queries run on each webhook, and of a report\'s pages', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-plans-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('rows waiting on a sender are found by the index of phases, not by reading the batch', async () => {
    const store = SqliteStore.open(join(dir, 'paybatch.db'));
    const { prepare, seen } = recordStatements(store);
    await store.rowsWaitingOnSender('SND-1');
    const sql = seen.find((text) => text.includes('sender.external_id')) as string;
    const plan = (prepare(`EXPLAIN QUERY PLAN ${sql}`).all('SND-1') as { detail: string }[]).map((step) => step.detail).join('; ');
    // A sender.approved event on a million-row batch read every row of it (0.7 s each, 6 s of a daemon deaf to webhooks).
    expect(plan).toMatch(/SEARCH rows USING INDEX rows_batch_phase \(batch_id=\? AND phase=\?\)/);
    await store.close();
  });

  it('a report\'s pages after the first start in the primary key where the last ended, for a day and for a batch', async () => {
    const store = SqliteStore.open(join(dir, 'report-pages.db'));
    const { prepare, seen } = recordStatements(store);
    const after = { batch: 'B20260302-00000001', line: 5000 };
    await store.ledgerRowPage({ from: '2026-03-02T00:00:00.000Z', to: '2026-03-03T00:00:00.000Z' }, after, 5000);
    await store.ledgerRowPage({ batch: after.batch }, after, 5000);
    const plans = seen.filter((text) => text.includes('ORDER BY r.batch_id, r.line')).map((sql) => (prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => 'x')) as { detail: string }[]).map((step) => step.detail).join('; '));
    // Written as batch > ? OR (batch = ? AND line > ?), every page scanned from the first row: a day's report of 200,000
    // rows read 4 million of them (1.23 s of its pages, 0.23 s from the key), a million 100 million.
    expect(plans).toHaveLength(2);
    for (const plan of plans) expect(plan).toMatch(/SEARCH r USING PRIMARY KEY \(.*\)/);
    await store.close();
  });

  it('the possible-duplicate screen looks for twins by a range of the table by payment, never through the batch\'s own entries', async () => {
    const store = SqliteStore.open(join(dir, 'screen.db'));
    const { prepare, seen } = recordStatements(store);
    await store.batchTwins('B20260302-00000001', 0, 1000, '2026-03-01T00:00:00.000Z');
    await store.sameBatchTwins('B20260302-00000001', 0, 1000);
    const planOf = (marker: string): string => {
      const sql = seen.find((text) => text.includes(marker)) as string;
      return (prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => 'x')) as { detail: string }[]).map((step) => step.detail).join('; ');
    };
    // Other batches: those before this one's id and those after it, each a range. "Another batch" alone walked the
    // batch's own entries of each payment for every row: a file paying one account one amount 20,000 times, 26 s.
    const before = planOf('t.batch_id < k.batch_id');
    const after = planOf('t.batch_id > k.batch_id');
    expect(before).toMatch(/SEARCH t USING PRIMARY KEY \(recipient_key=\? AND currency=\? AND amount=\? AND batch_id<\?\)/);
    expect(after).toMatch(/SEARCH t USING PRIMARY KEY \(recipient_key=\? AND currency=\? AND amount=\? AND batch_id>\?\)/);
    // Within the file: the first earlier line of the same payment, one step into the key.
    expect(planOf('ORDER BY t.line LIMIT 1')).toMatch(/SEARCH t USING PRIMARY KEY \(recipient_key=\? AND currency=\? AND amount=\? AND batch_id=\? AND line<\?\)/);
    await store.close();
  });
});
