/**
 * What every worker's commits touch on PostgreSQL, and how little they wait for
 * each other there: the audit chain, chained by the database in one call under
 * its lock (and refused where its hash is not paybatch's); state changes counted
 * per connection, added to what the batch's own row counted; and the batch's row
 * locked by a funding only when the batch has a budget to keep (fundings without
 * one only keep a budgeted one waiting).
 */
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry, NewAuditEntry } from '../../src/audit/chain.js';
import { ChainWalker, entryHash } from '../../src/audit/chain.js';
import type { NewRow, PipelineRow } from '../../src/store/port.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { PIPELINE_SQL } from '../../src/store/queries/pipeline.js';
import { freshDatabase, postgresAvailable } from '../helpers/postgres.js';

const available = await postgresAvailable('the hot rows of PostgreSQL commits');
const AT = '2026-03-02T09:00:00.000Z';

const newRow = (line: number, id: string): NewRow => ({
  line, external_id: id, errors: [],
  request: { external_id: id, type: 'bank', input_currency_code: 'USD', output_currency_code: 'GBP', output_amount_in_cents: '10000', sender: { external_id: `S-${id}` }, recipient: { country_code: 'GBR' } },
});

/** Text with what JSON escapes or leaves alone: quotes, backslashes, control characters, beyond ASCII, beyond the BMP. */
const ODD = ['"', '\\', '\n', '\t', '\u0001', '\u001f', '\u007f', 'é', '€', '😀', '\u2028', '/', "'", '<', '\u00a0'];
const oddText = (i: number, length: number): string => Array.from({ length }, (_, k) => ((i * 7 + k * 13) % 5 === 0 ? ODD[(i + k) % ODD.length] : String.fromCharCode(97 + ((i + k) % 26)))).join('');

describe.skipIf(!available)('PostgreSQL: what every commit touches', () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let one: PostgresStore;
  let two: PostgresStore;
  let admin: pg.Client;

  beforeEach(async () => {
    database = await freshDatabase();
    one = await PostgresStore.open(database.url);
    two = await PostgresStore.open(database.url);
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
  });
  afterEach(async () => {
    await admin.end();
    await one.close();
    await two.close();
    await database.drop();
  });

  const trail = async (): Promise<AuditEntry[]> => (await admin.query<AuditEntry>('SELECT seq, version, at, actor, action, subject, details, prev_hash, hash FROM audit_log ORDER BY seq')).rows;

  it('audit entries appended by two stores at once, whatever their text, make one chain that verifies, each hashed as chain.ts hashes it', async () => {
    const entry = (i: number): NewAuditEntry => ({ at: `${AT}${oddText(i, 3)}`, actor: oddText(i, 6), action: `act ${oddText(i + 1, 8)}`, subject: `B-${i} line ${i}`, details: { note: oddText(i + 2, 30), n: i, nested: { text: oddText(i + 3, 5) } } });
    await Promise.all(Array.from({ length: 120 }, (_, i) => (i % 2 === 0 ? one : two).appendAudit(entry(i))));
    const entries = await trail();
    expect(entries).toHaveLength(120);
    const walker = new ChainWalker();
    for (const stored of entries) {
      expect(entryHash(stored.prev_hash, stored, stored.version)).toBe(stored.hash);
      expect(walker.next(stored)).toBeNull();
    }
    // Every entry is there once, with the text it was given.
    expect(new Set(entries.map((e) => e.subject)).size).toBe(120);
    expect(entries.find((e) => e.subject === 'B-7 line 7')?.actor).toBe(entry(7).actor);
  });

  it('an entry the database would hash otherwise than paybatch is refused, and nothing of its transaction is kept', async () => {
    await one.appendAudit({ at: AT, actor: 'paybatch', action: 'configuration', subject: 'paybatch.config.json', details: {} });
    const definition = (await admin.query<{ def: string }>("SELECT pg_get_functiondef('paybatch_append_audit'::regproc) AS def")).rows[0]?.def as string;
    expect(definition).toContain('convert_to(hashed_before');
    await admin.query(definition.replace('convert_to(hashed_before', "convert_to('x' || hashed_before"));
    await expect(one.appendAudit({ at: AT, actor: 'paybatch', action: 'report_written', subject: 'r', details: {} })).rejects.toThrow(/does not hash as paybatch hashes it: nothing was changed/);
    expect((await trail()).map((e) => e.action)).toEqual(['configuration']);
  });

  it('state changes counted by every connection add up, with what the batch row counted (earlier releases), in every read of the batch', async () => {
    const batch = await one.beginBatch({ file_name: 'a.csv', sha256: 'a'.repeat(64), size_bytes: 10, policy: 'reject_file', received_at: AT, file_mtime_ms: 1, send_after: 0 });
    await one.addRows(batch, Array.from({ length: 30 }, (_, i) => newRow(i + 2, `E-${i}`)));
    await one.acceptBatch(batch);
    // What an earlier release counted on the batch's row.
    await admin.query('UPDATE batches SET changes_by_answer = 5, changes_by_webhook = 1 WHERE id = $1', [batch]);
    const rows = await Promise.all(Array.from({ length: 30 }, async (_, i) => (await one.row(batch, i + 2)) as PipelineRow));
    // Thirty commits at once over two pools: every one counted, whichever connection made it.
    const outcomes = await Promise.all(rows.map((r, i) => (i % 2 === 0 ? one : two).commitRow(batch, r.line, r.revision, { changes: { phase: 'created', transaction_id: `tr_${i}`, state: 'approved' }, learned: i < 20 ? 'answer' : 'webhook' })));
    expect(outcomes.every((o) => o.kind === 'applied')).toBe(true);
    const counted = { changes_by_answer: 25, changes_by_webhook: 11, changes_by_polling: 0 };
    expect(await one.batch(batch)).toMatchObject(counted);
    expect((await two.openBatches()).find((b) => b.id === batch)).toMatchObject(counted);
    expect((await one.recentBatches('2026-01-01T00:00:00.000Z')).find((b) => b.id === batch)).toMatchObject(counted);
    expect((await one.acceptedBatchWithContent('a'.repeat(64)))).toMatchObject(counted);
    // Nothing counted on the batch's row by this release, until it is settled: then its counts are folded onto it.
    expect((await admin.query('SELECT changes_by_answer FROM batches WHERE id = $1', [batch])).rows[0]).toEqual({ changes_by_answer: 5 });
    const late = (await one.row(batch, 31)) as PipelineRow;
    await Promise.all([
      one.settleBatch(batch, AT),
      two.commitRow(batch, 31, late.revision, { changes: { state: 'paid' }, learned: 'polling' }),
    ]);
    expect(await one.batch(batch)).toMatchObject({ ...counted, changes_by_polling: 1, status: 'settled' });
    const kept = (await admin.query('SELECT COUNT(*)::int AS n FROM batch_learned WHERE batch_id = $1', [batch])).rows[0] as { n: number };
    expect(kept.n).toBeLessThanOrEqual(1);
    expect((await admin.query('SELECT changes_by_answer, changes_by_webhook FROM batches WHERE id = $1', [batch])).rows[0]).toEqual({ changes_by_answer: 25, changes_by_webhook: 11 });
    // Counted after the fold: on a connection's row again, and added.
    const later = (await one.row(batch, 31)) as PipelineRow;
    expect(await one.commitRow(batch, 31, later.revision, { changes: { state: 'refunded' }, learned: 'webhook' })).toEqual({ kind: 'applied' });
    expect(await one.batch(batch)).toMatchObject({ changes_by_webhook: 12, changes_by_polling: 1, changes_by_answer: 25 });
  });

  it('two workers committing one row at one revision at once: one applied, the other moved, its state counted once', async () => {
    const batch = await one.beginBatch({ file_name: 'c.csv', sha256: 'c'.repeat(64), size_bytes: 10, policy: 'reject_file', received_at: AT, file_mtime_ms: 1, send_after: 0 });
    await one.addRows(batch, Array.from({ length: 20 }, (_, i) => newRow(i + 2, `R-${i}`)));
    await one.acceptBatch(batch);
    const rows = await Promise.all(Array.from({ length: 20 }, async (_, i) => (await one.row(batch, i + 2)) as PipelineRow));
    const audits = [{ action: 'state_learned', at: AT, details: { state: 'approved' } }];
    const raced = await Promise.all(rows.flatMap((r, i) => [
      one.commitRow(batch, r.line, r.revision, { changes: { phase: 'created', transaction_id: `tr_${i}`, state: 'approved' }, learned: 'answer', audits }),
      two.commitRow(batch, r.line, r.revision, { changes: { phase: 'created', transaction_id: `tr_${i}`, state: 'approved' }, learned: 'webhook', audits }),
      // One with nothing but the row's own columns, at the same revision: a statement of its own.
      two.commitRow(batch, r.line, r.revision, { changes: { next_read_at: 1 } }),
    ]));
    for (let i = 0; i < 20; i++) expect(raced.slice(i * 3, i * 3 + 3).filter((o) => o.kind === 'applied')).toHaveLength(1);
    const counted = await one.batch(batch);
    expect((counted?.changes_by_answer ?? 0) + (counted?.changes_by_webhook ?? 0)).toBe(raced.filter((o, k) => o.kind === 'applied' && k % 3 !== 2).length);
    for (const r of rows) expect((await one.row(batch, r.line))?.revision).toBe(r.revision + 1);
    // Every applied commit's entries, and no other's.
    expect((await trail()).length).toBe(raced.filter((o, k) => o.kind === 'applied' && k % 3 !== 2).length);
  });

  it("a budgeted funding that waited for the batch's row while a currency stop was written sees that stop: nothing of it kept", async () => {
    const batch = await one.beginBatch({ file_name: 's.csv', sha256: 'd'.repeat(64), size_bytes: 10, policy: 'reject_file', received_at: AT, file_mtime_ms: 1, send_after: 0 });
    await one.addRows(batch, [newRow(2, 'S-1')]);
    await one.acceptBatch(batch);
    const r = (await one.row(batch, 2)) as PipelineRow;
    // What stopCurrency writes, left open: its foreign key holds the batch's row (KEY SHARE) until it commits.
    await admin.query('BEGIN');
    let n = 0;
    await admin.query(PIPELINE_SQL.stopFunding.replace(/\?/g, () => `$${++n}`), ['USD', 'the USD balance ran out', AT]);
    const funding = one.commitRow(batch, 2, r.revision, { changes: { phase: 'funding', input_amount: '10000', input_currency: 'USD' }, reserve: { currency: 'USD', amount: 10_000n, budget: 1_000_000n } });
    const watcher = new pg.Client({ connectionString: database.url });
    await watcher.connect();
    try {
      while (((await watcher.query<{ n: number }>("SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0]?.n ?? 0) < 1) {
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      await watcher.end();
    }
    await admin.query('COMMIT');
    expect(await funding).toEqual({ kind: 'stopped', detail: 'the USD balance ran out' });
    expect(await one.row(batch, 2)).toMatchObject({ phase: 'ready', revision: r.revision });
  });

  it("fundings without a budget do not wait for each other on the batch's row; one with a budget waits for them and counts what they committed", async () => {
    const batch = await one.beginBatch({ file_name: 'b.csv', sha256: 'b'.repeat(64), size_bytes: 10, policy: 'reject_file', received_at: AT, file_mtime_ms: 1, send_after: 0 });
    await one.addRows(batch, [newRow(2, 'F-1'), newRow(3, 'F-2'), newRow(4, 'F-3')]);
    await one.acceptBatch(batch);
    const [r2, r3, r4] = (await Promise.all([2, 3, 4].map((line) => one.row(batch, line)))) as PipelineRow[];
    const fund = (amount: number, budget: bigint | null) => ({
      changes: { phase: 'funding' as const, input_amount: String(amount), input_currency: 'USD', fund_attempts: 1 },
      reserve: { currency: 'USD', amount: BigInt(amount), budget },
      audits: [{ action: 'fund_requested', at: AT, details: { amount, currency: 'USD' } }],
    });
    const watcher = new pg.Client({ connectionString: database.url });
    await watcher.connect();
    // Sessions of this database waiting for a lock, seen from a session outside any transaction (one inside keeps its first look).
    const waitingOn = async (what: string): Promise<number> => (await watcher.query<{ n: number }>(
      "SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1", [`${what}%`])).rows[0]?.n ?? 0;
    const until = async (what: string, n: number): Promise<void> => {
      while ((await waitingOn(what)) !== n) await new Promise((resolve) => setImmediate(resolve));
    };
    try {
      // The audit trail's lock held elsewhere: each funding's row change waits there, uncommitted, as under load.
      await admin.query('BEGIN');
      await admin.query('SELECT pg_advisory_xact_lock(7281919)');
      // Two fundings without a budget, on two pools: both reach the trail's lock (neither waited for the other's batch row).
      const free = [one.commitRow(batch, 2, r2!.revision, fund(60_000, null)), two.commitRow(batch, 3, r3!.revision, fund(30_000, null))];
      await until('SELECT prev_hash, hash FROM paybatch_append_audit', 2);
      // With a budget of 1,000.00 it waits for them on the batch's row, and then counts them: 900.00 committed, 100.00 more is over.
      const budgeted = one.commitRow(batch, 4, r4!.revision, fund(20_000, 100_000n));
      await until('SELECT 1 FROM batches', 1);
      await admin.query('COMMIT');
      expect(await Promise.all(free)).toEqual([{ kind: 'applied' }, { kind: 'applied' }]);
      expect(await budgeted).toEqual({ kind: 'over_budget', committed: 90_000n });
    } finally {
      await watcher.end();
    }
  });
});
