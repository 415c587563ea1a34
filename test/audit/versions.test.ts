/**
 * Entries written before the audit hash was made unambiguous keep their hash:
 * a trail of version 1 entries (fields joined by newlines), migrated, still
 * verifies, with the version 2 entries written after it, in SQLite (through
 * `paybatch audit verify`) and in PostgreSQL. An entry marked version 1 by hand
 * after version 2 ones breaks the chain.
 */
import { hash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/chain.js';
import { ChainWalker, GENESIS } from '../../src/audit/chain.js';
import { verifyWholeTrail } from '../../src/engine/audit-verification.js';
import { migrate, openDatabase } from '../../src/store/sqlite/database.js';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { migratePg } from '../../src/store/postgres/migrate.js';
import { PG_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { runCli } from '../helpers/cli.js';
import { freshDatabase, postgresAvailable } from '../helpers/postgres.js';

/** Entries as the earlier paybatch wrote them: their hash over the fields joined by newlines. */
function versionOneTrail(): Omit<AuditEntry, 'seq' | 'version'>[] {
  let prev = GENESIS;
  return [
    { at: '2026-03-01T09:00:00.000Z', actor: 'paybatch', action: 'configuration', subject: 'paybatch.config.json', details: '{"sha256":"ab"}' },
    { at: '2026-03-01T09:01:00.000Z', actor: 'ada', action: 'approved', subject: 'B-1', details: '{"signature":"c2ln"}' },
    { at: '2026-03-01T09:02:00.000Z', actor: 'paybatch', action: 'create_requested', subject: 'B-1 line 2', details: '{}' },
  ].map((e) => {
    const h = hash('sha256', `${prev}\n${e.at}\n${e.actor}\n${e.action}\n${e.subject}\n${e.details}`, 'hex');
    const entry = { ...e, prev_hash: prev, hash: h };
    prev = h;
    return entry;
  });
}

const INSERT = 'INSERT INTO audit_log (at, actor, action, subject, details, prev_hash, hash) VALUES ';

function walk(entries: readonly AuditEntry[]): { broken: string | null; count: number } {
  const walker = new ChainWalker();
  for (const [index, entry] of entries.entries()) {
    const found = walker.next(entry, entries[index + 1]);
    if (found) return { broken: found.message, count: walker.count };
  }
  return { broken: null, count: walker.count };
}

const available = await postgresAvailable('the audit trail\'s versions in PostgreSQL');

describe('version 1 entries after the migration', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-audit-versions-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('SQLite: old entries keep version 1 and verify, new ones are version 2; a version lowered by hand breaks the chain', { timeout: 30_000 }, async () => {
    const home = join(dir, 'ws');
    mkdirSync(home);
    const file = join(home, 'paybatch.db');
    const old = openDatabase(file);
    // The schema before the version column (migration 14).
    migrate(old, MIGRATIONS.slice(0, 13));
    for (const e of versionOneTrail()) old.prepare(`${INSERT}(?, ?, ?, ?, ?, ?, ?)`).run(e.at, e.actor, e.action, e.subject, e.details, e.prev_hash, e.hash);
    old.close();
    const store = SqliteStore.open(file);
    await store.appendAudit({ at: '2026-03-02T09:00:00.000Z', actor: 'grace', action: 'approved', subject: 'B-2', details: { signature: 'c2ln' } });
    const entries = await store.auditEntries(0, 10);
    await store.close();
    expect(entries.map((e) => e.version)).toEqual([1, 1, 1, 2]);
    expect(walk(entries)).toEqual({ broken: null, count: 4 });
    const env = { PAYBATCH_HOME: home };
    const verified = await runCli(['audit', 'verify', '--head', `2:${(entries[1] as AuditEntry).hash}`], { env });
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stderr).toBe('');
    expect(verified.stdout).toMatch(/^audit trail intact: 4 entries, head 4:[0-9a-f]{64}; the head 2 printed earlier is in it\n$/);

    const lowered = walk(entries.map((e) => (e.seq === 4 ? { ...e, version: 1 } : e)));
    expect(lowered.broken).toMatch(/entry 4 \(approved B-2\) was edited/);
    const db = new Database(file);
    db.prepare('UPDATE audit_log SET version = 1 WHERE seq = 4').run();
    db.close();
    expect((await runCli(['audit', 'verify'], { env })).stdout).toMatch(/^audit trail BROKEN at entry 4: entry 4 \(approved B-2\) was edited/);
  });

  it.skipIf(!available)('PostgreSQL: the same, through the store', { timeout: 30_000 }, async () => {
    const database = await freshDatabase();
    try {
      const pool = new pg.Pool({ connectionString: database.url, max: 1 });
      // The schema before the version column (PostgreSQL migration 8).
      await migratePg(pool, PG_MIGRATIONS.slice(0, 7));
      for (const e of versionOneTrail()) await pool.query(`${INSERT}($1, $2, $3, $4, $5, $6, $7)`, [e.at, e.actor, e.action, e.subject, e.details, e.prev_hash, e.hash]);
      await pool.end();
      const store = await PostgresStore.open(database.url);
      try {
        await store.appendAudit({ at: '2026-03-02T09:00:00.000Z', actor: 'grace', action: 'approved', subject: 'B-2', details: { signature: 'c2ln' } });
        const entries = await store.auditEntries(0, 10);
        expect(entries.map((e) => e.version)).toEqual([1, 1, 1, 2]);
        expect(walk(entries)).toEqual({ broken: null, count: 4 });
        expect((await store.decisionEntries('B-2')).map((e) => [e.seq, e.actor])).toEqual([[4, 'grace']]);
        // What `paybatch audit verify` runs: on PostgreSQL, the trail walked page by page.
        expect(await verifyWholeTrail(store)).toMatchObject({ entries: 4, broken: null, head: { seq: 4 }, counts: { actions: { approved: 2, configuration: 1, create_requested: 1 } } });
      } finally {
        await store.close();
      }
    } finally {
      await database.drop();
    }
  });
});
