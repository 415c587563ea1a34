/**
 * The corridor summary of a batch accepted before it existed (SQLite migration
 * 11, PostgreSQL 5): made once, at its next send, from its rows still ready.
 * The summary is removed by hand here, as it is absent for such a batch; and
 * two of its rows' requests are JSON objects, as rows stored before the compact
 * form of requests (SQLite migration 21, PostgreSQL 16) are, beside compact ones.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { NewRow, Store } from '../../src/store/port.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { freshDatabase, postgresAvailable } from '../helpers/postgres.js';

const AT = '2026-03-02T09:00:00.000Z';
const row = (line: number, country: string, type: string, output: string): NewRow => ({
  line, external_id: `X-${line}`, errors: [],
  request: { external_id: `X-${line}`, type, input_currency_code: 'USD', output_currency_code: output, output_amount_in_cents: '100', sender: { external_id: 'S' }, recipient: { country_code: country } },
});

/** Lines whose request is made a JSON object, as stored before the compact form: one of each corridor left ready. */
const STORED_AS_OBJECTS = [4, 6];

/**
 * A batch as one accepted before the summary: its rows made ready, lines 2 and 3 sent since, no summary. `forget`
 * removes its summary and gives each line of STORED_AS_OBJECTS the request `asObject` names.
 */
async function acceptedBeforeTheSummary(store: Store, forget: (batch: string, asObject: Map<number, string>) => Promise<void>): Promise<string> {
  const batch = await store.beginBatch({ file_name: 'old.csv', sha256: 'a'.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: AT, file_mtime_ms: 1, send_after: 0 });
  const rows = [row(2, 'USA', 'bank', 'USD'), row(3, 'GBR', 'bank', 'GBP'), row(4, 'NGA', 'cash', 'NGN'), row(5, 'NGA', 'cash', 'NGN'), row(6, 'NGA', 'bank', 'NGN')];
  await store.addRows(batch, rows);
  await store.acceptBatch(batch);
  await forget(batch, new Map(rows.filter((r) => STORED_AS_OBJECTS.includes(r.line)).map((r) => [r.line, JSON.stringify(r.request)])));
  for (const line of STORED_AS_OBJECTS) expect((await store.row(batch, line))?.request).toEqual(rows.find((r) => r.line === line)?.request);
  for (const line of [2, 3]) {
    const sent = await store.row(batch, line);
    await store.commitRow(batch, line, sent?.revision as number, { changes: { phase: 'creating' } });
  }
  return batch;
}

async function madeOnce(store: Store, batch: string, summaryRows: () => Promise<number>): Promise<void> {
  expect(await summaryRows()).toBe(0);
  const expected = [
    { country_code: 'NGA', type: 'bank', input_currency: 'USD', output_currency: 'NGN', rows: 1 },
    { country_code: 'NGA', type: 'cash', input_currency: 'USD', output_currency: 'NGN', rows: 2 },
  ];
  expect(await store.batchCorridors(batch)).toEqual(expected);
  expect(await summaryRows()).toBe(2);
  // Kept: asked again, the same, not counted twice.
  expect(await store.batchCorridors(batch)).toEqual(expected);
  expect(await store.endReadyRowsOfCorridor(batch, expected[1] as (typeof expected)[number], 'corridor_inactive', 'off')).toEqual([
    { line: 4, external_id: 'X-4' }, { line: 5, external_id: 'X-5' },
  ]);
  expect(await store.batchCorridors(batch)).toEqual([expected[0]]);
  expect(await summaryRows()).toBe(2);
}

const postgres = await postgresAvailable('the PostgreSQL corridor summary test');

describe('the corridor summary of a batch accepted before it existed', () => {
  it('SQLite: made once from the rows still ready', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'paybatch-corridors-'));
    const file = join(dir, 'paybatch.db');
    const store = SqliteStore.open(file);
    const raw = new Database(file);
    try {
      const batch = await acceptedBeforeTheSummary(store, async (id, asObject) => {
        raw.prepare('DELETE FROM batch_corridors WHERE batch_id = ?').run(id);
        for (const [line, request] of asObject) expect(raw.prepare('UPDATE rows SET request = ? WHERE batch_id = ? AND line = ?').run(request, id, line).changes).toBe(1);
      });
      await madeOnce(store, batch, async () => raw.prepare('SELECT COUNT(*) FROM batch_corridors WHERE batch_id = ?').pluck().get(batch) as number);
    } finally {
      raw.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!postgres)('PostgreSQL: made once from the rows still ready', async () => {
    const database = await freshDatabase();
    const store = await PostgresStore.open(database.url);
    const raw = new pg.Client({ connectionString: database.url });
    await raw.connect();
    try {
      const batch = await acceptedBeforeTheSummary(store, async (id, asObject) => {
        await raw.query('DELETE FROM batch_corridors WHERE batch_id = $1', [id]);
        for (const [line, request] of asObject) expect((await raw.query('UPDATE rows SET request = $1 WHERE batch_id = $2 AND line = $3', [request, id, line])).rowCount).toBe(1);
      });
      await madeOnce(store, batch, async () => Number((await raw.query('SELECT COUNT(*) AS n FROM batch_corridors WHERE batch_id = $1', [batch])).rows[0].n));
    } finally {
      await raw.end();
      await store.close();
      await database.drop();
    }
  });
});
