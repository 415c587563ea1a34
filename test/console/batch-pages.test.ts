/**
 * A batch's rows on the console, paged by keyset (after a line) and filtered
 * by state and reason, and a settled batch's summary kept and made again when
 * what it was made from moves. On a real SQLite file, filled as bench:console
 * fills it (one settled batch; every 500th row failed, every 1,000th refunded instead).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsoleDatabase } from '../../bench/console-db.js';
import { ManualClock } from '../../src/clock.js';
import { batchRows, batchStatus } from '../../src/console/console-data.js';
import type { BatchView } from '../../src/engine/batch-view.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';

describe('a batch\'s rows by keyset, and its summary kept', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-batch-pages-'));
  const path = join(dir, 'paybatch.db');
  const clock = new ManualClock(Date.parse('2026-03-02T18:00:00.000Z'));
  let store: SqliteStore;
  let batch: string;
  let summary: BatchView;

  beforeAll(async () => {
    batch = (await buildConsoleDatabase(path, 1_200, '2026-03-02')).batch;
    store = SqliteStore.open(path);
    summary = (await batchStatus(store, clock, batch)) as BatchView;
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('pages after a line: each page goes on where the last one ended, and the last has no next', async () => {
    const first = await batchRows(store, summary, {}, 0, 500);
    expect(first.rows.map((r) => r.line)).toEqual(Array.from({ length: 500 }, (_, i) => i + 2));
    expect(first).toMatchObject({ matching: 1_200, next: 501 });
    const second = await batchRows(store, summary, {}, 501, 500);
    expect(second.rows[0]?.line).toBe(502);
    expect(second.next).toBe(1_001);
    const last = await batchRows(store, summary, {}, 1_001, 500);
    expect(last.rows.map((r) => r.line)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1_002));
    expect(last.next).toBeNull();
  });

  it('filters by state and reason, counted from the summary', async () => {
    expect(summary.states).toEqual({ paid: 1_198, failed: 1, refunded: 1 });
    const failed = await batchRows(store, summary, { state: 'failed' }, 0, 1);
    expect(failed).toMatchObject({ matching: 1, next: null });
    expect(failed.rows.map((r) => r.line)).toEqual([500]);
    // One a page: the page of paid rows goes on after the last one shown.
    const paid = await batchRows(store, summary, { state: 'paid' }, 498, 2);
    expect(paid.rows.map((r) => r.line)).toEqual([499, 501]);
    expect(paid.next).toBe(501);
    const returned = await batchRows(store, summary, { reason: 'returned_by_bank' }, 0, 10);
    expect(returned).toMatchObject({ matching: 1, next: null });
    expect(returned.rows.map((r) => r.line)).toEqual([1_000]);
  });

  it('a settled batch\'s summary is used again while its basis stands, and made again once a change is learned', async () => {
    const db = new Database(path);
    db.prepare("UPDATE rows SET state = 'refunded' WHERE batch_id = ? AND line = 2").run(batch);
    // Nothing the batch learned moved: the summary kept is what is shown.
    expect((await batchStatus(store, clock, batch))?.states).toEqual({ paid: 1_198, failed: 1, refunded: 1 });
    db.prepare('UPDATE batches SET changes_by_webhook = changes_by_webhook + 1 WHERE id = ?').run(batch);
    db.close();
    expect((await batchStatus(store, clock, batch))?.states).toEqual({ paid: 1_197, failed: 1, refunded: 2 });
  });
});
