/**
 * The possible-duplicate part of the store contract (see engine/duplicates.ts),
 * run against SQLite and PostgreSQL alike from their contract test files: the
 * store finds candidate twins and keeps what was found; it decides nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PayoutRequest } from '../../src/api/payout-request.js';
import { screenDuplicates } from '../../src/engine/duplicate-screen.js';
import type { Store } from '../../src/store/port.js';
import type { OpenedStore } from './contract.js';

const AT = '2026-03-02T09:00:00.000Z';
const request = (id: string, amount = '10000', iban = 'DE89370400440532013000'): PayoutRequest => ({
  external_id: id, type: 'bank', input_currency_code: 'EUR', output_currency_code: 'EUR', output_amount_in_cents: amount,
  sender: { external_id: 'S-1' }, recipient: { country_code: 'DEU', iban },
});
const entry = (line: number, amount = '10000') => ({ line, key: 'iban:DE89370400440532013000', currency: 'EUR', amount });

export function duplicateContract(name: string, open: () => Promise<OpenedStore>): void {
  describe(`the store contract, possible duplicates: ${name}`, () => {
    let opened: OpenedStore;
    let store: Store;
    beforeEach(async () => {
      opened = await open();
      store = opened.store;
    });
    afterEach(async () => opened.done());

    const amountOf = (id: string): string => (id.endsWith('9') ? '99' : '10000');

    /**
     * A batch of these rows, each paying the same account; addRows records their recipient entries, and they are
     * written by payment as intake's screen does once a batch's rows are all stored.
     */
    async function batchOf(sha: string, ids: string[], receivedAt = AT, amount = amountOf): Promise<string> {
      const batch = await store.beginBatch({ file_name: `${sha}.csv`, sha256: sha.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: receivedAt, file_mtime_ms: 1, send_after: 0 });
      await store.addRows(batch, ids.map((id, i) => ({ line: i + 2, external_id: id, request: request(id, amount(id)), errors: [] })));
      await store.indexRecipients(batch);
      return batch;
    }

    it('looks for twins only among batches whose accounts were written by payment; written again (after a crash part way), nothing twice; in chunks, every one', async () => {
      const since = '2026-02-01T00:00:00.000Z';
      const first = await store.beginBatch({ file_name: 'w.csv', sha256: 'w'.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: AT, file_mtime_ms: 1, send_after: 0 });
      // More than SQLite's chunk of 5,000 a transaction, the last chunk part full: line 2 and every line after pay the same.
      const count = 10_050;
      await store.addRows(first, Array.from({ length: count }, (_, i) => ({ line: i + 2, external_id: `W-${i + 1}`, request: request(`W-${i + 1}`), errors: [] })));
      // Stored (and sendable), not yet written by payment: nobody's twin, not even within its own file.
      await store.acceptBatch(first);
      expect(await store.twinsOf({ batch_id: '', ...entry(0) }, since, 10)).toEqual([]);
      expect(await store.sameBatchTwins(first, 0, count + 1)).toEqual([]);
      // As a crash part way leaves them (SQLite commits a chunk at a time): some written, the rest written at the next try.
      await store.indexRecipients(first);
      await opened.exec?.('DELETE FROM recipient_payments WHERE line > 6000');
      expect((await store.twinsOf({ batch_id: '', ...entry(0) }, since, count + 10)).length).toBe(5999);
      await store.indexRecipients(first);
      await store.indexRecipients(first);
      expect((await store.twinsOf({ batch_id: '', ...entry(0) }, since, count + 10)).length).toBe(count);
      const within = await store.sameBatchTwins(first, 0, count + 1);
      expect(within.length).toBe(count - 1);
      expect(within.every((twin, i) => twin.of_line === i + 3 && twin.line === 2 && twin.external_id === 'W-1')).toBe(true);
      // A later batch finds each of them once.
      const second = await batchOf('x', ['X-1']);
      expect((await store.batchTwins(second, 0, 2, since)).length).toBe(count);
    });

    it('screens two batches at once (watch takes several files): each one\'s every account written by payment under its own batch', async () => {
      const since = '2026-02-01T00:00:00.000Z';
      const account = (file: string, i: number): string => `DE${String(i).padStart(20, '0')}${file}`;
      // More than two of SQLite's chunks each: the two screens take turns between chunks.
      const count = 12_000;
      const stored = async (sha: string, file: string): Promise<string> => {
        const batch = await store.beginBatch({ file_name: `${sha}.csv`, sha256: sha.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: AT, file_mtime_ms: 1, send_after: 0 });
        await store.addRows(batch, Array.from({ length: count }, (_, i) => ({ line: i + 2, external_id: `${file}-${i}`, request: request(`${file}-${i}`, '10000', account(file, i)), errors: [] })));
        return batch;
      };
      const a = await stored('j', 'A');
      const b = await stored('k', 'B');
      const policy = { duplicate_window: '30d', on_duplicate: 'hold' as const };
      expect(await Promise.all([screenDuplicates(a, Date.parse(AT), { store, batch: policy }), screenDuplicates(b, Date.parse(AT), { store, batch: policy })]))
        .toEqual([{ held: 0, warned: 0 }, { held: 0, warned: 0 }]);
      await store.acceptBatch(a);
      await store.acceptBatch(b);
      // A later payment to any account of either file finds its row, once, in its own batch.
      for (const [file, batch] of [['A', a], ['B', b]] as const) {
        for (const i of [0, 4_999, 5_000, 9_999, 10_000, count - 1]) {
          const twins = await store.twinsOf({ batch_id: '', line: 0, key: `iban:${account(file, i)}`, currency: 'EUR', amount: '10000' }, since, 10);
          expect(twins.map((t) => [t.batch_id, t.line]), `${file} ${i}`).toEqual([[batch, i + 2]]);
        }
      }
    });

    it('writes by payment, once, at the first open of a database made before that table (SQLite 22, PostgreSQL 17), every account kept before', async () => {
      const { reopen, exec, rewindBeforePayments } = opened;
      if (!reopen || !exec || !rewindBeforePayments) throw new Error('this contract needs reopen, exec and rewindBeforePayments');
      const since = '2026-02-01T00:00:00.000Z';
      const batch = await batchOf('u', ['U-1', 'U-2', 'U-9']);
      await store.acceptBatch(batch);
      await rewindBeforePayments.call(opened);
      store = await reopen();
      expect((await store.twinsOf({ batch_id: '', ...entry(0) }, since, 10)).map((t) => t.external_id).sort()).toEqual(['U-1', 'U-2']);
      expect((await store.twinsOf({ batch_id: '', ...entry(0, '99') }, since, 10)).map((t) => t.external_id)).toEqual(['U-9']);
      // Once per database: an entry lost after it is not written again at the next open.
      await exec("DELETE FROM recipient_payments WHERE line = 2");
      store = await reopen();
      expect((await store.twinsOf({ batch_id: '', ...entry(0) }, since, 10)).map((t) => t.external_id)).toEqual(['U-2']);
    });

    it('finds rows of other batches paying the same account, amount and currency, not ended unpaid, within the window; holds, lists, allows', async () => {
      const first = await batchOf('a', ['P-1', 'P-2', 'P-9']);
      await store.acceptBatch(first);
      // P-2 ended unpaid (cancelled before funding): nobody's twin; P-9 another amount.
      const p2 = await store.row(first, 3);
      await store.commitRow(first, 3, p2?.revision as number, { changes: { phase: 'final', state: 'canceled', transaction_id: 'tr_2' } });
      const p1 = await store.row(first, 2);
      await store.commitRow(first, 2, p1?.revision as number, { changes: { phase: 'funded', state: 'stuck', transaction_id: 'tr_1', created_at: '2026-03-02T09:01:00.000Z' } });

      const second = await batchOf('b', ['Q-1', 'Q-2'], '2026-03-03T09:00:00.000Z');
      const twins = await store.batchTwins(second, 0, 3, '2026-02-01T00:00:00.000Z');
      expect(twins.map((t) => [t.of_line, t.batch_id, t.line, t.external_id, t.phase, t.state, t.at])).toEqual([
        [2, first, 2, 'P-1', 'funded', 'stuck', '2026-03-02T09:01:00.000Z'],
        [3, first, 2, 'P-1', 'funded', 'stuck', '2026-03-02T09:01:00.000Z'],
      ]);
      // Outside the window, none.
      expect(await store.batchTwins(second, 0, 3, '2026-03-02T09:02:00.000Z')).toEqual([]);

      const twin = { batch_id: first, line: 2, external_id: 'P-1', phase: 'funded' as const, state: 'stuck' as const, at: '2026-03-02T09:01:00.000Z' };
      await store.recordPossibleDuplicates([
        { batch_id: second, line: 2, external_id: 'Q-1', twin, action: 'hold', detail: 'held: twin may pay' },
        { batch_id: second, line: 3, external_id: 'Q-2', twin, action: 'warn', detail: 'sent' },
      ]);
      // Held before the acceptance, which leaves it held.
      expect(await store.acceptBatch(second)).toMatchObject({ ready: 1 });
      expect(await store.row(second, 2)).toMatchObject({ phase: 'duplicate_hold', outcome: 'possible_duplicate', outcome_detail: 'held: twin may pay' });
      expect(await store.row(second, 3)).toMatchObject({ phase: 'ready' });
      // A file not taken in yet ('' batch) sees both batches' rows: a held one may still be sent.
      expect((await store.twinsOf({ batch_id: '', ...entry(0) }, '2026-02-01T00:00:00.000Z', 10)).map((t) => t.external_id).sort()).toEqual(['P-1', 'Q-1', 'Q-2']);
      expect((await store.possibleDuplicates(second)).map((d) => [d.line, d.action, d.twin.external_id, d.twin.state])).toEqual([[2, 'hold', 'P-1', 'stuck'], [3, 'warn', 'P-1', 'stuck']]);
      expect((await store.heldDuplicates(10)).map((d) => [d.batch_id, d.line])).toEqual([[second, 2]]);
      expect(await store.unsettledRows(second)).toBe(2);

      const allowance = { person: 'Grace Hopper', reason: 'meant', at: '2026-03-03T10:00:00.000Z' };
      expect(await store.allowDuplicate(second, 2, allowance)).toBe(true);
      expect(await store.allowDuplicate(second, 2, allowance)).toBe(false);
      expect(await store.row(second, 2)).toMatchObject({ phase: 'ready', outcome: null });
      expect((await store.possibleDuplicates(second))[0]).toMatchObject({ allowed_by: 'Grace Hopper', allowed_reason: 'meant', allowed_at: allowance.at });
      expect(await store.lastAudit('duplicate_allowed')).toMatchObject({ actor: 'Grace Hopper', subject: `${second} line 2` });
      expect(await store.heldDuplicates(10)).toEqual([]);

      // A batch that ends without them (rejected as interrupted, withdrawn): its held rows end not sent, their ids free.
      const third = await batchOf('c', ['R-1']);
      await store.recordPossibleDuplicates([{ batch_id: third, line: 2, external_id: 'R-1', twin, action: 'hold', detail: 'held' }]);
      expect(await store.rowBySubmittedExternalId('R-1')).toMatchObject({ phase: 'duplicate_hold' });
      await store.rejectBatch(third, 'interrupted');
      expect(await store.endHeldDuplicates(third, null, null)).toBe(1);
      expect(await store.row(third, 2)).toMatchObject({ phase: 'not_sent' });
      expect(await store.rowBySubmittedExternalId('R-1')).toBeUndefined();
    });

    it('records a batch\'s recipients with its rows, more than a statement\'s hundred; a finding recorded again keeps who allowed it', async () => {
      const ids = Array.from({ length: 250 }, (_, i) => `M-${i + 1}`);
      const batch = await batchOf('d', ids, AT, (id) => (id === 'M-1' ? '555' : amountOf(id)));
      await store.acceptBatch(batch);
      const since = '2026-02-01T00:00:00.000Z';
      // 250 rows, 25 of them (ids ending in 9) paying 99; line 2 paying 555.
      expect((await store.twinsOf({ batch_id: '', ...entry(0) }, since, 1000)).length).toBe(224);
      expect((await store.twinsOf({ batch_id: '', ...entry(0, '555') }, since, 1000)).map((t) => t.line)).toEqual([2]);
      expect((await store.twinsOf({ batch_id: '', ...entry(0, '99') }, since, 1000)).map((t) => t.line).sort((x, y) => x - y).at(-1)).toBe(250);
      // Within the batch: each line's first earlier line paying the same (line 2 alone at 555; 3 and 10 the first at theirs).
      const expected = Array.from({ length: 17 }, (_, i) => i + 4).filter((line) => line !== 10)
        .map((line) => (line === 20 ? { of_line: 20, line: 10, external_id: 'M-9' } : { of_line: line, line: 3, external_id: 'M-2' }));
      expect(await store.sameBatchTwins(batch, 0, 20)).toEqual(expected);
      expect(await store.sameBatchTwins(batch, 19, 21)).toEqual([{ of_line: 20, line: 10, external_id: 'M-9' }, { of_line: 21, line: 3, external_id: 'M-2' }]);

      const twin = { batch_id: batch, line: 2, external_id: 'M-1', phase: 'ready' as const, state: null, at: AT };
      await store.recordPossibleDuplicates([{ batch_id: batch, line: 3, external_id: 'M-2', twin, action: 'hold', detail: 'held' }]);
      const allowance = { person: 'Grace Hopper', reason: 'meant', at: '2026-03-03T10:00:00.000Z' };
      expect(await store.allowDuplicate(batch, 3, allowance)).toBe(true);
      await store.recordPossibleDuplicates([{ batch_id: batch, line: 3, external_id: 'M-2', twin, action: 'warn', detail: 'found again' }]);
      expect(await store.possibleDuplicates(batch)).toEqual([expect.objectContaining({ line: 3, action: 'warn', detail: 'found again', allowed_by: 'Grace Hopper', allowed_reason: 'meant', allowed_at: allowance.at })]);
      expect(await store.row(batch, 3)).toMatchObject({ phase: 'ready' });
    });

    it('keeps 250 findings given at once, across its statements: each held row with its own finding\'s detail, warned ones left sendable, one whose id was sent elsewhere not held', async () => {
      const first = await batchOf('h', ['T-1', 'TAKEN']);
      await store.acceptBatch(first);
      const sent = await store.row(first, 3);
      await store.commitRow(first, 3, sent?.revision as number, { changes: { phase: 'funded', state: 'stuck', transaction_id: 'tr_t' } });
      // The second batch's line 2 reuses the id sent above (the acceptance refuses it; a hold must not hide that).
      const ids = Array.from({ length: 250 }, (_, i) => (i === 0 ? 'TAKEN' : `F-${i + 1}`));
      const second = await batchOf('i', ids, '2026-03-03T09:00:00.000Z');
      const twin = { batch_id: first, line: 2, external_id: 'T-1', phase: 'ready' as const, state: null, at: AT };
      const action = (line: number): 'hold' | 'warn' => (line % 3 === 0 ? 'warn' : 'hold');
      await store.recordPossibleDuplicates(ids.map((id, i) => ({ batch_id: second, line: i + 2, external_id: id, twin, action: action(i + 2), detail: `finding of line ${i + 2}` })));

      const kept = await store.possibleDuplicates(second);
      expect(kept.map((d) => [d.line, d.action, d.detail])).toEqual(ids.map((_, i) => [i + 2, action(i + 2), `finding of line ${i + 2}`]));
      for (const line of [3, 4, 101, 102, 103, 201, 202, 251]) {
        const row = await store.row(second, line);
        if (action(line) === 'warn') expect(row, `line ${line}`).toMatchObject({ outcome: null });
        else expect(row, `line ${line}`).toMatchObject({ phase: 'duplicate_hold', outcome: 'possible_duplicate', outcome_detail: `finding of line ${line}` });
      }
      expect((await store.row(second, 2))?.phase).not.toBe('duplicate_hold');
      expect((await store.heldDuplicates(1000)).filter((d) => d.batch_id === second).length).toBe(ids.filter((_, i) => action(i + 2) === 'hold').length - 1);
    });

    it('records the account of each row stored sendable with it, once; forgets a row made invalid; the check reads no row back', async () => {
      const batch = await store.beginBatch({ file_name: 'g.csv', sha256: 'g'.repeat(64), size_bytes: 1, policy: 'skip_invalid', received_at: AT, file_mtime_ms: 1, send_after: 0 });
      await store.addRows(batch, [
        { line: 2, external_id: 'G-1', request: request('G-1'), errors: [] },
        { line: 3, external_id: 'G-2', request: request('G-2'), errors: [] },
        // Made invalid once the whole file is read: nobody's twin, not even line 7's.
        { line: 4, external_id: 'G-3', request: request('G-3', '10000', 'DE44500105175407324931'), errors: [] },
        { line: 5, external_id: 'G-4', request: null, errors: [{ line: 5, column: 'type', code: 'required', message: 'm' }] },
        // Naming no account: no entry.
        { line: 6, external_id: 'G-5', request: { ...request('G-5'), type: 'cash', recipient: { country_code: 'DEU' } }, errors: [] },
      ]);
      await store.addRows(batch, [{ line: 7, external_id: 'G-6', request: request('G-6', '10000', 'DE44500105175407324931'), errors: [] }]);
      // Written by payment, then made invalid: forgotten there too.
      await store.indexRecipients(batch);
      await store.invalidateRow(batch, 4, { line: 4, column: 'external_id', code: 'duplicate_external_id', message: 'dup' });
      expect(await store.lastRecipientLine(batch)).toBe(7);
      expect(await store.sameBatchTwins(batch, 0, 7)).toEqual([{ of_line: 3, line: 2, external_id: 'G-1' }]);
      expect(await store.rowsAtLines(batch, [2, 3, 4, 5, 7])).toEqual([
        { line: 2, external_id: 'G-1', phase: expect.stringMatching(/^(ready|checking)$/) }, { line: 3, external_id: 'G-2', phase: expect.stringMatching(/^(ready|checking)$/) },
        { line: 4, external_id: 'G-3', phase: 'invalid' }, { line: 5, external_id: 'G-4', phase: 'invalid' }, { line: 7, external_id: 'G-6', phase: expect.stringMatching(/^(ready|checking)$/) },
      ]);
      // The check from the index alone: a store that cannot give the batch's rows back screens the same.
      const noRows = new Proxy(store, {
        get(target, property) {
          if (property === 'rows') throw new Error('the check read the rows back');
          const value: unknown = Reflect.get(target, property);
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      });
      expect(await screenDuplicates(batch, Date.parse(AT), { store: noRows, batch: { duplicate_window: '30d', on_duplicate: 'warn' } })).toEqual({ held: 0, warned: 1 });
      expect((await store.possibleDuplicates(batch)).map((d) => [d.line, d.action, d.twin.line])).toEqual([[3, 'warn', 2]]);
      // Accepted, its rows are twins of a later file's: each once, the invalid one not.
      await store.acceptBatch(batch);
      const since = '2026-02-01T00:00:00.000Z';
      expect((await store.twinsOf({ batch_id: '', ...entry(0) }, since, 10)).map((t) => t.line).sort()).toEqual([2, 3]);
      expect((await store.twinsOf({ batch_id: '', line: 0, key: 'iban:DE44500105175407324931', currency: 'EUR', amount: '10000' }, since, 10)).map((t) => t.line)).toEqual([7]);
    });

    it('gives rows stored before recipient accounts were kept their account at the next open, once: a later payment of the same account is held', async () => {
      const { reopen, exec, rewindBeforeDuplicateCheck } = opened;
      if (!reopen || !exec || !rewindBeforeDuplicateCheck) throw new Error('this contract needs reopen, exec and rewindBeforeDuplicateCheck');
      // As a version before the check stored them: rows with their requests, no recipient entries (the IBAN as people write it).
      const old = await store.beginBatch({ file_name: 'old.csv', sha256: 'e'.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: AT, file_mtime_ms: 1, send_after: 0 });
      await store.addRows(old, [
        { line: 2, external_id: 'O-1', request: request('O-1', '10000', 'de89 3704 0044 0532 0130 00'), errors: [] },
        { line: 3, external_id: 'O-2', request: request('O-2', '10000', 'DE44500105175407324931'), errors: [] },
        { line: 4, external_id: 'O-3', request: { ...request('O-3'), type: 'cash', recipient: { country_code: 'DEU' } }, errors: [] },
      ]);
      await store.acceptBatch(old);
      const o1 = await store.row(old, 2);
      await store.commitRow(old, 2, o1?.revision as number, { changes: { phase: 'final', state: 'paid', transaction_id: 'tr_o1', created_at: '2026-03-02T09:01:00.000Z', may_cancel: false } });
      // The service's may_cancel as committed (a yes or no, or not said), in rows and results alike.
      expect([(await store.row(old, 2))?.may_cancel, (await store.row(old, 3))?.may_cancel]).toEqual([false, null]);
      const results = [];
      for await (const r of store.resultRows(old)) results.push(r.may_cancel);
      expect(results).toEqual([false, null, null]);
      // A row cancelling before its cancellations were counted (SQLite 19, PostgreSQL 14).
      const o3 = await store.row(old, 4);
      await store.commitRow(old, 4, o3?.revision as number, { changes: { phase: 'cancelling', state: 'pending', transaction_id: 'tr_o3', created_at: '2026-03-02T09:01:00.000Z', heard_at: '2026-03-02T09:05:00.000Z' } });
      // The database as the version before the check left it: its tables and columns gone, its ledger at the version before.
      await rewindBeforeDuplicateCheck.call(opened);
      const since = '2026-02-01T00:00:00.000Z';

      store = await reopen();
      // Its first DELETE counted, the last time the service was heard of it standing for when it went: a send again
      // waits its interval, and three sends stay three. Rows not cancelling count none.
      expect(await store.row(old, 4)).toMatchObject({ phase: 'cancelling', cancels_sent: 1, cancel_sent_at: '2026-03-02T09:05:00.000Z', cancel_accepted_at: null });
      expect(await store.row(old, 2)).toMatchObject({ cancels_sent: 0, cancel_sent_at: null });
      expect((await store.twinsOf({ batch_id: '', ...entry(0) }, since, 10)).map((t) => [t.batch_id, t.line, t.external_id, t.state])).toEqual([[old, 2, 'O-1', 'paid']]);
      expect((await store.twinsOf({ batch_id: '', line: 0, key: 'iban:DE44500105175407324931', currency: 'EUR', amount: '10000' }, since, 10)).map((t) => t.line)).toEqual([3]);
      // Once per database: an entry lost after it is not filled again at the next open.
      await exec('DELETE FROM row_recipients WHERE line = 3; DELETE FROM recipient_payments WHERE line = 3');
      store = await reopen();
      expect(await store.twinsOf({ batch_id: '', line: 0, key: 'iban:DE44500105175407324931', currency: 'EUR', amount: '10000' }, since, 10)).toEqual([]);

      // A new file paying the same IBAN the same amount: held by intake's own screen.
      const next = await store.beginBatch({ file_name: 'new.csv', sha256: 'f'.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: '2026-03-03T09:00:00.000Z', file_mtime_ms: 1, send_after: 0 });
      await store.addRows(next, [{ line: 2, external_id: 'N-1', request: request('N-1'), errors: [] }]);
      expect(await screenDuplicates(next, Date.parse('2026-03-03T09:00:00.000Z'), { store, batch: { duplicate_window: '30d', on_duplicate: 'hold' } })).toEqual({ held: 1, warned: 0 });
      await store.acceptBatch(next);
      expect(await store.row(next, 2)).toMatchObject({ phase: 'duplicate_hold', outcome: 'possible_duplicate' });
      expect((await store.possibleDuplicates(next)).map((d) => [d.twin.batch_id, d.twin.line, d.twin.external_id])).toEqual([[old, 2, 'O-1']]);
    });
  });
}
