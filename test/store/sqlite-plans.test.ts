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

describe('plans of the queries run on each webhook', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-plans-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('rows waiting on a sender are found by the index of phases, not by reading the batch', async () => {
    const store = SqliteStore.open(join(dir, 'paybatch.db'));
    const db = (store as unknown as { db: Database.Database }).db;
    const prepare = db.prepare.bind(db);
    const seen: string[] = [];
    db.prepare = ((sql: string) => {
      seen.push(sql);
      return prepare(sql);
    }) as typeof db.prepare;
    await store.rowsWaitingOnSender('SND-1');
    const sql = seen.find((text) => text.includes('sender.external_id')) as string;
    const plan = (prepare(`EXPLAIN QUERY PLAN ${sql}`).all('SND-1') as { detail: string }[]).map((step) => step.detail).join('; ');
    // A sender.approved event on a million-row batch read every row of it (0.7 s each, 6 s of a daemon deaf to webhooks).
    expect(plan).toMatch(/SEARCH rows USING INDEX rows_batch_phase \(batch_id=\? AND phase=\?\)/);
    await store.close();
  });
});
