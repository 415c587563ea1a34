/**
 * SQLite's group commit and its compare-and-set, where no other store reaches:
 * a piece of work that throws in a group (the group is tried again, each piece
 * in a savepoint, so that only that piece is undone), the audit trail's head
 * carried from one entry to the next within a group, and a caller's copy of a
 * row that is out of date at the same revision (the row changed behind the
 * store's back), which must move nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/chain.js';
import { ChainWalker } from '../../src/audit/chain.js';
import type { PipelineRow, RowPatch } from '../../src/store/port.js';
import type { Phase, TxState } from '../../src/payout-states.js';
import { appendAuditNow } from '../../src/store/sqlite/audit.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { ROW_ACTIONS } from '../../src/store/queries/audit-pages.js';

const AT = '2026-03-02T09:00:00.000Z';

describe('SQLite group commit', () => {
  let dir: string;
  let file: string;
  let store: SqliteStore;
  let batch: string;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'paybatch-group-'));
    file = join(dir, 'paybatch.db');
    store = SqliteStore.open(file);
    batch = await store.beginBatch({ file_name: 'a.csv', sha256: 'a'.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: AT, file_mtime_ms: 1, send_after: 0 });
    await store.addRows(batch, ['A', 'B', 'C', 'D'].map((id, i) => ({
      line: i + 2, external_id: id, errors: [],
      request: { external_id: id, type: 'bank', input_currency_code: 'USD', output_currency_code: 'GBP', output_amount_in_cents: '100', sender: { external_id: 'S' }, recipient: { country_code: 'GBR' } },
    })));
    await store.acceptBatch(batch);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const row = async (line: number): Promise<PipelineRow> => (await store.row(batch, line)) as PipelineRow;
  const created = (line: number, state: TxState): RowPatch => ({
    changes: { phase: 'created', transaction_id: `tr_${line}`, state }, learned: 'answer',
    audits: [{ action: 'state_learned', at: AT, details: { line, state } }],
  });

  async function trail(): Promise<AuditEntry[]> {
    const entries: AuditEntry[] = [];
    for (let after = 0; ; ) {
      const page = await store.auditEntries(after, 100);
      if (page.length === 0) return entries;
      entries.push(...page);
      after = (page[page.length - 1] as AuditEntry).seq;
    }
  }

  function chainBreaks(entries: AuditEntry[]): unknown[] {
    const walker = new ChainWalker();
    return entries.map((entry, i) => walker.next(entry, entries[i + 1])).filter((b) => b !== null);
  }

  it('a piece that throws is undone alone: the others applied, their audit entries chained, their state changes counted', async () => {
    const rows = await Promise.all([2, 3, 4, 5].map(row));
    const outcomes = await Promise.allSettled([
      store.commitRow(batch, 2, (rows[0] as PipelineRow).revision, created(2, 'approved'), rows[0]),
      store.commitRow(batch, 3, (rows[1] as PipelineRow).revision, created(3, 'approved'), rows[1]),
      // A phase may not be null (NOT NULL): this piece throws after the two before it wrote their rows and entries.
      store.commitRow(batch, 4, (rows[2] as PipelineRow).revision, { ...created(4, 'approved'), changes: { phase: null as unknown as Phase, state: 'approved' } }, rows[2]),
      store.commitRow(batch, 5, (rows[3] as PipelineRow).revision, created(5, 'initial'), rows[3]),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(String((outcomes[2] as PromiseRejectedResult).reason)).toMatch(/NOT NULL/);
    expect((await Promise.all([2, 3, 4, 5].map(row))).map((r) => [r.phase, r.transaction_id])).toEqual([
      ['created', 'tr_2'], ['created', 'tr_3'], ['ready', null], ['created', 'tr_5'],
    ]);
    // Counted once each (not again for the try that was rolled back), the thrown piece not at all.
    expect((await store.batch(batch))?.changes_by_answer).toBe(3);
    const entries = (await trail()).filter((e) => e.action === 'state_learned');
    expect(entries.map((e) => JSON.parse(e.details).line)).toEqual([2, 3, 5]);
    expect(chainBreaks(await trail())).toEqual([]);
  });

  it('a group of many pieces chains its audit entries one after another, and the next group follows on', async () => {
    const rows = await Promise.all([2, 3, 4, 5].map(row));
    await Promise.all(rows.map((r) => store.commitRow(batch, r.line, r.revision, created(r.line, 'approved'), r)));
    const again = await Promise.all([2, 3].map(row));
    await Promise.all(again.map((r) => store.commitRow(batch, r.line, r.revision, { changes: { state: 'pending' }, audits: [{ action: 'state_learned', at: AT, details: { line: r.line, state: 'pending' } }] }, r)));
    await store.appendAudit({ at: AT, actor: 'someone', action: 'note', subject: batch, details: {} });
    const entries = await trail();
    expect(entries.filter((e) => e.action === 'state_learned')).toHaveLength(6);
    expect(chainBreaks(entries)).toEqual([]);
    // Nothing reads the trail by time, and an index of every entry cost every commit its last pages. Of the indexes, the
    // decisions' (migration 14) and the actions' (migration 18) are partial: a row's entries as it is sent never enter
    // them. The batch's takes them (the console's batch filter), at its end: one batch's entries follow one another.
    const other = new Database(file, { readonly: true });
    expect(other.prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'audit_log' ORDER BY name").all()).toEqual([
      { name: 'audit_log_action', sql: expect.stringMatching(new RegExp(` WHERE action NOT IN \\(${ROW_ACTIONS.map((a) => `'${a}'`).join(', ')}\\)$`)) },
      { name: 'audit_log_batch', sql: expect.stringMatching(/ON audit_log\(batch_id\) WHERE batch_id IS NOT NULL$/) },
      { name: 'audit_log_decisions', sql: expect.stringMatching(/ WHERE action IN \('approved', 'rejected'\)$/) },
    ]);
    other.close();
  });

  it('after a group, another process appends to the trail: the next entry outside a group chains to it, not to the group\'s last', async () => {
    const rows = await Promise.all([2, 3].map(row));
    await Promise.all(rows.map((r) => store.commitRow(batch, r.line, r.revision, created(r.line, 'approved'), r)));
    // Another paybatch on the same database (an approval given from the command line, say).
    const elsewhere = SqliteStore.open(file);
    await elsewhere.appendAudit({ at: AT, actor: 'someone', action: 'note', subject: batch, details: { from: 'elsewhere' } });
    await elsewhere.close();
    await store.appendAudit({ at: AT, actor: 'someone', action: 'note', subject: batch, details: { from: 'here' } });
    const entries = await trail();
    expect(entries.map((e) => e.action)).toEqual(['state_learned', 'state_learned', 'note', 'note']);
    expect(chainBreaks(entries)).toEqual([]);
  });

  it('read a row back only in paybatch\'s own words: a phase or outcome written by hand that paybatch does not have is an error', async () => {
    const raw = new Database(file);
    try {
      raw.prepare("UPDATE rows SET phase = 'sent' WHERE batch_id = ? AND line = 2").run(batch);
      await expect(store.row(batch, 2)).rejects.toThrow(/phase "sent"/);
      // The service's word for a state is kept as it said it (a lie included): not checked here.
      raw.prepare("UPDATE rows SET phase = 'created', state = 'declined', outcome = 'because' WHERE batch_id = ? AND line = 2").run(batch);
      await expect(store.row(batch, 2)).rejects.toThrow(/"because"/);
      raw.prepare('UPDATE rows SET outcome = NULL WHERE batch_id = ? AND line = 2').run(batch);
      expect(await store.row(batch, 2)).toMatchObject({ phase: 'created', state: 'declined', outcome: null });
    } finally {
      raw.close();
    }
  });

  it('work in a group that undoes a nested transaction of its own: the entries after it chain to the trail as it stands', async () => {
    // Through the store's connection: no grouped work does this today, but the trail's head must not survive an undo.
    const inside = store.connection;
    const entry = (action: string) => ({ at: AT, actor: 'paybatch', action, subject: batch, details: {} });
    await inside.atomicInGroup(() => {
      appendAuditNow(inside, entry('one'));
      try {
        inside.atomic(() => {
          appendAuditNow(inside, entry('undone'));
          throw new Error('undone');
        });
      } catch {
        // The nested transaction is undone; the work goes on.
      }
      appendAuditNow(inside, entry('two'));
    });
    const entries = await trail();
    expect(entries.map((e) => e.action)).toEqual(['one', 'two']);
    expect(chainBreaks(entries)).toEqual([]);
  });

  it('a copy of the row that is out of date at the same revision moves nothing: the commit is refused as moved', async () => {
    const a = await row(2);
    // Changed behind the store's back, its revision left as it was.
    const other = new Database(file);
    other.prepare("UPDATE rows SET transaction_id = 'tr_elsewhere', phase = 'created' WHERE batch_id = ? AND line = 2").run(batch);
    other.close();
    // The caller believes the row holds no transaction: the transaction id it names would be left out as unchanged were
    // the copy trusted; and the taken check would be skipped for the same reason.
    expect(await store.commitRow(batch, 2, a.revision, { changes: { phase: 'funded', transaction_id: 'tr_elsewhere', state: 'pending' }, learned: 'answer' }, { ...a, transaction_id: 'tr_elsewhere' }))
      .toEqual({ kind: 'moved' });
    expect(await row(2)).toMatchObject({ phase: 'created', transaction_id: 'tr_elsewhere', state: null, revision: a.revision });
    expect((await store.batch(batch))?.changes_by_answer).toBe(0);
    // Read again, it applies.
    const fresh = await row(2);
    expect(await store.commitRow(batch, 2, fresh.revision, { changes: { phase: 'funded', transaction_id: 'tr_elsewhere', state: 'pending' }, learned: 'answer' }, fresh)).toEqual({ kind: 'applied' });
    expect(await row(2)).toMatchObject({ phase: 'funded', transaction_id: 'tr_elsewhere', state: 'pending', revision: a.revision + 1 });
  });
});
