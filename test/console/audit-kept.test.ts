/**
 * The chain's verification kept and extended (src/console/audit-kept.ts) on a
 * real SQLite file: a view verifies only the entries after the checkpoint and
 * moves it; a tampered entry in that tail is found and the checkpoint stays; an
 * entry before it is not looked at again (the page says how far it verified),
 * unless it is the checkpoint's own entry; the full check puts the checkpoint
 * back to the start on a break, and the console then finds it too. The audit
 * page's keyset pages: by batch (its rows, and the file taken in as it), by
 * action, older than an entry.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { extendVerification, keepFullVerification } from '../../src/console/audit-kept.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';

const AT = '2026-03-02T09:00:00.000Z';

describe('the audit verification kept, and the audit pages', () => {
  let dir: string;
  let path: string;
  let store: SqliteStore;
  const add = async (n: number, subject = 'B-1 line 2', action = 'state_learned'): Promise<void> => {
    for (let i = 0; i < n; i += 1) await store.appendAudit({ at: AT, actor: 'paybatch', action, subject, details: { i } });
  };
  const tamper = (seq: number): void => {
    const db = new Database(path);
    db.prepare('UPDATE audit_log SET details = ? WHERE seq = ?').run('{"i":999}', seq);
    db.close();
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'paybatch-audit-kept-'));
    path = join(dir, 'paybatch.db');
    store = SqliteStore.open(path);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a view verifies the tail after the checkpoint, counts it, and moves the checkpoint there', async () => {
    await add(5);
    const first = await extendVerification(store, '2026-03-02T10:00:00.000Z');
    expect(first).toMatchObject({ broken: null, entries: 5, verified: { seq: 5, at: '2026-03-02T10:00:00.000Z' } });
    expect(first.counts.actions).toEqual({ state_learned: 5 });
    await add(3, 'other.csv', 'intake_accepted');
    const second = await extendVerification(store, '2026-03-02T11:00:00.000Z');
    expect(second).toMatchObject({ broken: null, entries: 8, verified: { seq: 8, at: '2026-03-02T11:00:00.000Z' } });
    expect(second.counts.actions).toEqual({ state_learned: 5, intake_accepted: 3 });
    expect(second.counts.batches).toEqual({ 'B-1': 5 });
    expect((await store.auditCheckpoint()).seq).toBe(8);
  });

  it('a tampered entry in the tail is found, and the checkpoint is not moved past it', async () => {
    await add(5);
    await extendVerification(store, AT);
    await add(4);
    tamper(7);
    const view = await extendVerification(store, AT);
    expect(view.broken).toMatchObject({ seq: 7, kind: 'edited' });
    expect(view.verified.seq).toBe(5);
    expect((await store.auditCheckpoint()).seq).toBe(5);
    // Each later view finds it again: the kept result never covers it.
    expect((await extendVerification(store, AT)).broken).toMatchObject({ seq: 7 });
  });

  it('the kept result is not trusted beyond what it covered: its own entry changed is found; an earlier one only by the full check, which then resets it', async () => {
    await add(6);
    await extendVerification(store, '2026-03-02T10:00:00.000Z');
    tamper(3);
    // Entry 3 is inside what was verified: a view does not walk it again, and says up to where and when it verified.
    const inside = await extendVerification(store, AT);
    expect(inside).toMatchObject({ broken: null, verified: { seq: 6, at: '2026-03-02T10:00:00.000Z' } });
    // The full check found the break (as `paybatch audit verify` does) and put the checkpoint back: the console finds it now.
    await keepFullVerification(store, null);
    expect((await store.auditCheckpoint()).seq).toBe(0);
    expect((await extendVerification(store, AT)).broken).toMatchObject({ seq: 3, kind: 'edited' });
  });

  it('the checkpoint\'s own entry changed after it was verified is named', async () => {
    await add(4);
    await extendVerification(store, '2026-03-02T10:00:00.000Z');
    tamper(4);
    await add(2);
    const view = await extendVerification(store, AT);
    expect(view.broken).toMatchObject({ seq: 4, kind: 'edited' });
    expect(view.broken?.message).toContain('verified intact at 2026-03-02T10:00:00.000Z');
    expect((await store.auditCheckpoint()).seq).toBe(4);
  });

  it('the checkpoint moves by compare-and-set: a view that saw an older one does not write over a newer one', async () => {
    await add(3);
    await extendVerification(store, AT);
    const stale = { seq: 1, hash: 'x'.repeat(64), verified_at: AT, counts: { actions: {}, batches: {} } };
    expect(await store.moveAuditCheckpoint(0, stale)).toBe(false);
    expect((await store.auditCheckpoint()).seq).toBe(3);
  });

  it('pages by keyset: newest first, older than an entry, by batch (the file taken in as it too) and by action', async () => {
    await store.appendAudit({ at: AT, actor: 'inbox', action: 'intake_accepted', subject: 'pay.csv', details: { batch: 'B-1', rows: 3 } }); // 1
    await add(4); // 2 to 5
    await add(2, 'B-10 line 2'); // 6, 7
    await store.appendAudit({ at: AT, actor: 'paybatch', action: 'approved', subject: 'B-1', details: {} }); // 8
    const seqs = async (filter: Parameters<SqliteStore['auditPage']>[0], limit = 3): Promise<number[]> => (await store.auditPage(filter, limit)).map((e) => e.seq);
    expect(await seqs({})).toEqual([8, 7, 6]);
    expect(await seqs({ before: 6 })).toEqual([5, 4, 3]);
    expect(await seqs({ batch: 'B-1' }, 10)).toEqual([8, 5, 4, 3, 2, 1]);
    expect(await seqs({ batch: 'B-1', before: 4 }, 10)).toEqual([3, 2, 1]);
    expect(await seqs({ batch: 'B-10' }, 10)).toEqual([7, 6]);
    expect(await seqs({ action: 'state_learned', before: 7 }, 10)).toEqual([6, 5, 4, 3, 2]);
    expect(await seqs({ action: 'approved', batch: 'B-1' })).toEqual([8]);
  });
});
