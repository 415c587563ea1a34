/**
 * The store contract: what every database behind paybatch must do, method by
 * method, run against SQLite and PostgreSQL alike (sqlite-contract.test.ts,
 * postgres-contract.test.ts). Each test starts from an empty store.
 */
import { beforeEach, afterEach, describe, expect, it } from 'vitest';
import type { PayoutRequest } from '../../src/api/payout-request.js';
import type { NewRow, PipelineRow, Store } from '../../src/store/port.js';
import { lineageOf } from '../../src/engine/lineage.js';

export interface OpenedStore {
  store: Store;
  /** Closes the store and opens the same database again (what a new version does at its first start); done() closes that one. */
  reopen?(): Promise<Store>;
  /** Runs SQL on the database as it is, outside the store (to make it look as an older version left it). */
  exec?(sql: string): Promise<void>;
  /** Takes the database back to the schema before the possible-duplicate check (SQLite 15, PostgreSQL 9), its rows kept. */
  rewindBeforeDuplicateCheck?(): Promise<void>;
  /** Back to the schema before recipient_payments (SQLite 21, PostgreSQL 16): the index by payment on row_recipients. */
  rewindBeforePayments?(): Promise<void>;
  done(): Promise<void>;
}

const request = (id: string, currency = 'USD', amount = '10000', sender = 'S-1'): PayoutRequest => ({
  external_id: id, type: 'bank', input_currency_code: currency, output_currency_code: 'GBP', output_amount_in_cents: amount,
  sender: { external_id: sender }, recipient: { country_code: 'GBR' },
});
const newRow = (line: number, id: string, currency = 'USD', sender = 'S-1'): NewRow => ({ line, external_id: id, request: request(id, currency, '10000', sender), errors: [] });
const AT = '2026-03-02T09:00:00.000Z';

export function storeContract(name: string, open: () => Promise<OpenedStore>): void {
  describe(`the store contract: ${name}`, () => {
    let opened: OpenedStore;
    let store: Store;
    beforeEach(async () => {
      opened = await open();
      store = opened.store;
    });
    afterEach(async () => opened.done());

    /** A batch taken in and accepted, with `ids` as its rows (lines 2, 3, ...). */
    async function accepted(ids: string[], sha = 'a'.repeat(64), currency = 'USD'): Promise<string> {
      const batch = await store.beginBatch({ file_name: `${sha.slice(0, 4)}.csv`, sha256: sha, size_bytes: 10, policy: 'reject_file', received_at: AT, file_mtime_ms: 1, send_after: 0 });
      await store.addRows(batch, ids.map((id, i) => newRow(i + 2, id, currency, `S-${id}`)));
      await store.acceptBatch(batch);
      return batch;
    }
    const row = async (batch: string, line: number): Promise<PipelineRow> => (await store.row(batch, line)) as PipelineRow;

    it('intake: the latest batch of a content ended at release after an instant, and only such a batch', async () => {
      const sha = 'e'.repeat(64);
      const begin = (at: string) => store.beginBatch({ file_name: 'e.csv', sha256: sha, size_bytes: 1, policy: 'reject_file', received_at: at, file_mtime_ms: null, send_after: 0 });
      const interrupted = await begin('2026-03-02T09:00:00.000Z');
      await store.rejectBatch(interrupted, 'interrupted during intake');
      const ended = await begin('2026-03-02T10:00:00.000Z');
      await store.acceptBatch(ended);
      expect(await store.endedBatchWithContent(sha, '2026-03-02T09:00:00.000Z')).toBeUndefined();
      await store.setApprovalState(ended, 'rejected', 'rejected by grace');
      expect(await store.withdrawBatch(ended, 'approval_rejected', 'rejected by grace')).toBe(true);
      expect((await store.endedBatchWithContent(sha, '2026-03-02T09:00:00.000Z'))?.id).toBe(ended);
      expect(await store.endedBatchWithContent(sha, '2026-03-02T10:00:00.000Z')).toBeUndefined();
      expect(await store.endedBatchWithContent('f'.repeat(64), '2026-03-02T09:00:00.000Z')).toBeUndefined();
    });

    it('intake: batches with unique ids, rows in file order, acceptance refusing external ids used before, rejection', async () => {
      const first = await accepted(['A', 'B']);
      expect(first).toMatch(/^B20260302-aaaaaaaa$/);
      const again = await store.beginBatch({ file_name: 'x.csv', sha256: 'a'.repeat(64), size_bytes: 1, policy: 'skip_invalid', received_at: AT, file_mtime_ms: null, send_after: 0 });
      expect(again).toBe(`${first}-2`);
      expect((await store.acceptedBatchWithContent('a'.repeat(64)))?.id).toBe(first);
      await store.addRows(again, [newRow(2, 'B'), newRow(3, 'C'), { line: 4, external_id: 'D', request: null, errors: [{ line: 4, column: 'type', code: 'required', message: 'm' }] }]);
      await store.invalidateRow(again, 3, { line: 3, column: 'external_id', code: 'duplicate_external_id', message: 'dup' });
      // Asked to refuse the same content (intake, without --force): the batch accepted before is named, nothing accepted.
      expect(await store.acceptBatch(again, { refuseSameContent: true })).toEqual({ sameContentAs: expect.objectContaining({ id: first, status: 'accepted' }) });
      expect(await store.batch(again)).toMatchObject({ status: 'intake' });
      expect(await store.acceptBatch(again)).toEqual({ ready: 0, refused: 1, invalid: 2 });
      const rows = [];
      for await (const r of store.rows(again)) rows.push([r.line, r.phase, r.outcome, r.errors.map((e) => e.code)]);
      expect(rows).toEqual([[2, 'refused', 'external_id_already_used', []], [3, 'invalid', null, ['duplicate_external_id']], [4, 'invalid', null, ['required']]]);
      const third = await store.beginBatch({ file_name: 'y.csv', sha256: 'b'.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: AT, file_mtime_ms: null, send_after: 0 });
      expect((await store.interruptedIntakes()).map((b) => b.id)).toEqual([third]);
      expect(await store.rejectBatch(third, 'interrupted')).toBe(true);
      expect(await store.rejectBatch(third, 'again')).toBe(false);
      expect(await store.batch(third)).toMatchObject({ status: 'rejected', reason: 'interrupted', released: 0 });
      expect((await store.batchesInProcessing()).map((b) => b.id).sort()).toEqual([first, again].sort());
    });

    it('intake: rows stored as taken in send nothing until accepted; a rejected intake leaves its external ids free', async () => {
      // Stored once, as they come: a repeated external_id in the file (found once the file is read) must not stop it.
      const batch = await store.beginBatch({ file_name: 'p.csv', sha256: 'd'.repeat(64), size_bytes: 1, policy: 'skip_invalid', received_at: AT, file_mtime_ms: null, send_after: 0 });
      await store.addRows(batch, [newRow(2, 'X'), newRow(3, 'Y')]);
      await store.addRows(batch, [newRow(4, 'Y')]);
      expect((await store.openBatches()).map((b) => b.id)).not.toContain(batch);
      expect(await store.rejectBatch(batch, 'the file does not match its manifest')).toBe(true);
      const rows = [];
      for await (const r of store.rows(batch)) rows.push([r.line, r.phase]);
      expect(rows).toEqual([[2, 'not_sent'], [3, 'not_sent'], [4, 'not_sent']]);
      // Rows stored after the rejection (by a worker that lost the workspace meanwhile) are not sendable either.
      await store.addRows(batch, [newRow(5, 'V')]);
      for await (const r of store.rows(batch)) expect(r.phase).not.toBe('ready');
      // Nothing of it was sent: X, Y and V are anybody's.
      const next = await accepted(['X', 'Y', 'V'], 'e'.repeat(64));
      expect((await row(next, 4)).phase).toBe('ready');
      expect([(await row(next, 2)).phase, (await row(next, 3)).phase]).toEqual(['ready', 'ready']);
      // And one accepted with a line invalid for a repeated id: the other line is sent.
      const third = await store.beginBatch({ file_name: 'q.csv', sha256: 'f'.repeat(64), size_bytes: 1, policy: 'skip_invalid', received_at: AT, file_mtime_ms: null, send_after: 0 });
      await store.addRows(third, [newRow(2, 'Z'), newRow(3, 'Z'), newRow(4, 'W')]);
      await store.invalidateRow(third, 2, { line: 2, column: 'external_id', code: 'duplicate_external_id', message: 'dup' });
      expect(await store.acceptBatch(third)).toEqual({ ready: 2, refused: 0, invalid: 1 });
      expect([(await row(third, 3)).phase, (await row(third, 4)).phase]).toEqual(['ready', 'ready']);
    });

    it('release, withdrawal (only when nothing was sent), approval request', async () => {
      const batch = await accepted(['A', 'B']);
      expect(await store.batchReleased(batch)).toBe(false);
      await store.requestApproval(batch, 'inbox', '2026-03-03T09:00:00.000Z');
      expect(await store.batch(batch)).toMatchObject({ approval: 'awaiting', submitted_by: 'inbox' });
      await store.releaseBatch(batch);
      expect(await store.batchReleased(batch)).toBe(true);
      expect(await store.batch(batch)).toMatchObject({ released: 1, released_at: null, release_seal: null });
      // With approvals on, the time of release and its seal (see approvals/release-seal.ts) are kept with it.
      await store.releaseBatch(batch, { at: AT, seal: 'f'.repeat(64) });
      expect(await store.batch(batch)).toMatchObject({ released: 1, released_at: AT, release_seal: 'f'.repeat(64) });
      const r = await row(batch, 2);
      await store.commitRow(batch, 2, r.revision, { changes: { phase: 'creating' } });
      expect(await store.withdrawBatch(batch, 'file_changed', 'changed')).toBe(false);
      const other = await accepted(['C'], 'c'.repeat(64));
      expect(await store.withdrawBatch(other, 'file_changed', 'changed')).toBe(true);
      expect(await row(other, 2)).toMatchObject({ phase: 'not_sent', outcome: 'file_changed', outcome_detail: 'changed' });
      expect((await store.batch(other))?.status).toBe('rejected');
    });

    it('compare-and-set: a commit applies at the revision read, never twice; a transaction id is held by one row', async () => {
      const batch = await accepted(['A', 'B']);
      const a = await row(batch, 2);
      expect(await store.commitRow(batch, 2, a.revision, { changes: { phase: 'created', transaction_id: 'tr_1', state: 'approved', input_amount: '12000' }, learned: 'answer' })).toEqual({ kind: 'applied' });
      expect(await store.commitRow(batch, 2, a.revision, { changes: { phase: 'final' } })).toEqual({ kind: 'moved' });
      expect(await row(batch, 2)).toMatchObject({ phase: 'created', transaction_id: 'tr_1', state: 'approved', input_amount: '12000', revision: a.revision + 1 });
      expect((await store.batch(batch))?.changes_by_answer).toBe(1);
      const b = await row(batch, 3);
      expect(await store.commitRow(batch, 3, b.revision, { changes: { transaction_id: 'tr_1' } })).toEqual({ kind: 'taken', batch_id: batch, line: 2 });
      expect(await store.rowByTransaction('tr_1')).toMatchObject({ line: 2 });
      expect(await store.rowBySubmittedExternalId('A')).toMatchObject({ line: 2 });
      expect(await store.knowsTransaction('tr_1')).toBe(true);
      expect(await store.movePhase(batch, 3, ['created'], 'final')).toBe(false);
      expect(await store.movePhase(batch, 3, ['ready'], 'not_sent', 'corridor_inactive', 'off')).toBe(true);
      expect(await row(batch, 3)).toMatchObject({ phase: 'not_sent', outcome: 'corridor_inactive', outcome_detail: 'off' });
    });

    it('compare-and-set given the row as the caller read it: the same outcomes as when the store reads it', async () => {
      const batch = await accepted(['A', 'B', 'C']);
      const a = await row(batch, 2);
      // Applied; the transaction id named again with the same value changes nothing of it; a second commit at the old revision moved.
      expect(await store.commitRow(batch, 2, a.revision, { changes: { phase: 'created', transaction_id: 'tr_1', state: 'approved' }, learned: 'answer' }, a)).toEqual({ kind: 'applied' });
      expect(await store.commitRow(batch, 2, a.revision, { changes: { phase: 'final' } }, a)).toEqual({ kind: 'moved' });
      const created = await row(batch, 2);
      expect(await store.commitRow(batch, 2, created.revision, { changes: { phase: 'funded', transaction_id: 'tr_1', state: 'pending', funded_at: AT }, learned: 'answer' }, created))
        .toEqual({ kind: 'applied' });
      expect(await row(batch, 2)).toMatchObject({ phase: 'funded', transaction_id: 'tr_1', state: 'pending', funded_at: AT, revision: a.revision + 2 });
      expect(await store.rowByTransaction('tr_1')).toMatchObject({ line: 2 });
      expect((await store.batch(batch))?.changes_by_answer).toBe(2);
      // Another row's transaction: taken, while the row is as read; moved once it is not (a refusal is for the row as it stands).
      const b = await row(batch, 3);
      expect(await store.commitRow(batch, 3, b.revision, { changes: { transaction_id: 'tr_1' } }, b)).toEqual({ kind: 'taken', batch_id: batch, line: 2 });
      expect(await store.commitRow(batch, 3, b.revision, { changes: { phase: 'creating' } }, b)).toEqual({ kind: 'applied' });
      expect(await store.commitRow(batch, 3, b.revision, { changes: { transaction_id: 'tr_1' } }, b)).toEqual({ kind: 'moved' });
      await store.stopCurrency('USD', 'the USD balance ran out', AT);
      const c = await row(batch, 4);
      const fund = { changes: { phase: 'funding' as const }, reserve: { currency: 'USD', amount: 10_000n, budget: null } };
      expect(await store.commitRow(batch, 4, c.revision, fund, c)).toEqual({ kind: 'stopped', detail: 'the USD balance ran out' });
      expect(await store.commitRow(batch, 4, c.revision - 1, fund, { ...c })).toEqual({ kind: 'moved' });
      // A read scheduled meanwhile moves the next read's time, not the revision: the copy is still the row at its revision.
      const funded = await row(batch, 2);
      await store.scheduleRead(batch, 2, 5_000, false);
      expect(await store.commitRow(batch, 2, funded.revision, { changes: { state: 'paid', next_read_at: 9_000 }, learned: 'polling' }, funded)).toEqual({ kind: 'applied' });
      expect(await row(batch, 2)).toMatchObject({ state: 'paid', next_read_at: 9_000 });
    });

    it('commits asked together: each compared and set on its own; state changes counted by batch and source, only for commits applied', async () => {
      const one = await accepted(['A', 'B', 'C']);
      const two = await accepted(['D'], 'd'.repeat(64));
      const [a, b, c, d] = await Promise.all([row(one, 2), row(one, 3), row(one, 4), row(two, 2)]);
      // Asked in one turn (on SQLite, one group commit), each on a row of its own: what comes of each does not depend
      // on the order in which the store takes them.
      const outcomes = await Promise.all([
        store.commitRow(one, 2, a.revision, { changes: { phase: 'created', transaction_id: 'tr_a', state: 'approved' }, learned: 'answer' }),
        store.commitRow(one, 3, b.revision, { changes: { phase: 'created', transaction_id: 'tr_b', state: 'initial' }, learned: 'webhook' }),
        store.commitRow(one, 4, c.revision + 1, { changes: { phase: 'created', transaction_id: 'tr_c', state: 'approved' }, learned: 'answer' }),
        store.commitRow(two, 2, d.revision, { changes: { phase: 'created', transaction_id: 'tr_d', state: 'approved' }, learned: 'polling' }),
      ]);
      expect(outcomes.map((o) => o.kind)).toEqual(['applied', 'applied', 'moved', 'applied']);
      expect(await store.batch(one)).toMatchObject({ changes_by_answer: 1, changes_by_webhook: 1, changes_by_polling: 0 });
      expect(await store.batch(two)).toMatchObject({ changes_by_answer: 0, changes_by_webhook: 0, changes_by_polling: 1 });
      // Together again: a state learned again (no change), and a transaction another row holds (not applied).
      const again = await Promise.all([
        store.commitRow(one, 2, a.revision + 1, { changes: { transaction_id: 'tr_a', state: 'approved', observed_at: AT }, learned: 'polling' }),
        store.commitRow(one, 4, c.revision, { changes: { phase: 'created', transaction_id: 'tr_a', state: 'approved' }, learned: 'answer' }),
      ]);
      expect(again.map((o) => o.kind)).toEqual(['applied', 'taken']);
      expect(await store.batch(one)).toMatchObject({ changes_by_answer: 1, changes_by_webhook: 1, changes_by_polling: 0 });
      // The row that holds its transaction learns a new state: counted.
      expect(await store.commitRow(one, 2, a.revision + 2, { changes: { transaction_id: 'tr_a', state: 'pending' }, learned: 'polling' })).toEqual({ kind: 'applied' });
      expect(await store.batch(one)).toMatchObject({ changes_by_answer: 1, changes_by_webhook: 1, changes_by_polling: 1 });
    });

    it('corridors: summarised as the batch is accepted, listed while they have ready rows; the ready rows of one ended together', async () => {
      const corridor = (country: string, type: string, input: string, output: string) => ({ country_code: country, type, input_currency: input, output_currency: output });
      const on = (line: number, id: string, c: ReturnType<typeof corridor>): NewRow => ({
        line, external_id: id, errors: [],
        request: { ...request(id, c.input_currency), type: c.type, output_currency_code: c.output_currency, recipient: { country_code: c.country_code, first_name: 'A' } },
      });
      const gbr = corridor('GBR', 'bank', 'USD', 'GBP');
      const cash = corridor('NGA', 'cash', 'USD', 'NGN');
      const eur = corridor('DEU', 'bank', 'EUR', 'EUR');
      const earlier = await accepted(['USED']);
      const withdrawn = await accepted(['FREED']);
      const batch = await store.beginBatch({ file_name: 'c.csv', sha256: 'c'.repeat(64), size_bytes: 10, policy: 'skip_invalid', received_at: AT, file_mtime_ms: 1, send_after: 0 });
      // Lines far apart: acceptance may make rows ready in chunks of lines, each adding to the summary.
      await store.addRows(batch, [
        on(2, 'A', gbr), on(3, 'B', cash), on(4, 'C', gbr), on(5, 'USED', eur),
        { line: 6, external_id: 'BAD', request: null, errors: [{ line: 6, column: 'type', code: 'required', message: 'm' }] },
        on(7, 'D', eur), on(12_002, 'E', gbr), on(12_003, 'F', cash),
      ]);
      // Taken when stored (checking), freed before the acceptance, which makes it ready; and a row stored ready that a
      // late finding makes invalid before it.
      await store.addRows(batch, [on(12_004, 'FREED', cash), on(12_005, 'G', gbr)]);
      expect(await store.endReadyRows(withdrawn, 'approval_invalid', 'withdrawn')).toBe(1);
      await store.invalidateRow(batch, 12_005, { line: 12_005, column: 'external_id', code: 'duplicate_external_id', message: 'dup' });
      expect(await store.acceptBatch(batch)).toEqual({ ready: 7, refused: 1, invalid: 2 });
      // Refused and invalid rows are not counted, rows made ready are; the batch accepted first has its own.
      expect(await store.batchCorridors(batch)).toEqual([{ ...eur, rows: 1 }, { ...gbr, rows: 3 }, { ...cash, rows: 3 }]);
      expect(await store.batchCorridors(earlier)).toEqual([{ ...gbr, rows: 1 }]);
      const before = await row(batch, 4);
      expect(await store.endReadyRowsOfCorridor(batch, gbr, 'corridor_inactive', 'the bank corridor to GBR is not active')).toEqual([
        { line: 2, external_id: 'A' }, { line: 4, external_id: 'C' }, { line: 12_002, external_id: 'E' },
      ]);
      expect(await row(batch, 4)).toMatchObject({ phase: 'not_sent', outcome: 'corridor_inactive', outcome_detail: 'the bank corridor to GBR is not active', revision: before.revision + 1 });
      expect(await row(batch, 3)).toMatchObject({ phase: 'ready', outcome: null });
      expect(await row(earlier, 2)).toMatchObject({ phase: 'ready' });
      expect(await store.endReadyRowsOfCorridor(batch, gbr, 'corridor_inactive', 'again')).toEqual([]);
      // A corridor whose rows all left ready (ended, or sent) is no longer listed: the service is not asked about it.
      expect((await store.batchCorridors(batch)).map((c) => c.country_code)).toEqual(['DEU', 'NGA']);
      const d = await row(batch, 7);
      await store.commitRow(batch, 7, d.revision, { changes: { phase: 'creating' } });
      expect(await store.batchCorridors(batch)).toEqual([{ ...cash, rows: 3 }]);
      expect(await store.endReadyRows(batch, 'approval_invalid', 'held')).toBe(3);
      expect(await store.batchCorridors(batch)).toEqual([]);
    });

    it('reservations: within the budget, exact in integers; refused once the currency is stopped', async () => {
      const batch = await accepted(['A', 'B', 'C']);
      for (const line of [2, 3, 4]) {
        const r = await row(batch, line);
        await store.commitRow(batch, line, r.revision, { changes: { phase: 'created', input_amount: '999999999999999900' } });
      }
      const reserve = async (line: number, budget: bigint) => {
        const r = await row(batch, line);
        return store.commitRow(batch, line, r.revision, { changes: { phase: 'funding' }, reserve: { currency: 'USD', amount: 999_999_999_999_999_900n, budget } });
      };
      expect(await reserve(2, 1_000_000_000_000_000_000n)).toEqual({ kind: 'applied' });
      expect(await reserve(3, 1_999_999_999_999_999_799n)).toEqual({ kind: 'over_budget', committed: 999_999_999_999_999_900n });
      expect(await store.stopCurrency('USD', 'the USD balance ran out', AT)).toEqual({ batches: 1, notSent: 0 });
      expect(await store.stopCurrency('USD', 'again', AT)).toEqual({ batches: 0, notSent: 0 });
      expect(await reserve(4, 10n ** 30n)).toEqual({ kind: 'stopped', detail: 'the USD balance ran out' });
      const later = await accepted(['D', 'E'], 'd'.repeat(64));
      expect(await store.endReadyRows(later, 'approval_invalid', 'held')).toBe(2);
      expect(await row(later, 3)).toMatchObject({ phase: 'not_sent', outcome: 'approval_invalid' });
    });

    it('stopping a currency ends the ready rows of that currency in open batches, and only those', async () => {
      const usd = await accepted(['A', 'B']);
      const eur = await accepted(['C'], 'e'.repeat(64), 'EUR');
      expect(await store.stopCurrency('USD', 'ran out', AT)).toEqual({ batches: 2, notSent: 2 });
      expect((await store.rowsInPhases(usd, ['not_sent'], 0, 10)).map((r) => r.outcome_detail)).toEqual(['not sent: ran out', 'not sent: ran out']);
      expect((await store.rowsInPhases(eur, ['ready'], 0, 10, 'EUR')).map((r) => r.external_id)).toEqual(['C']);
    });

    it('reads: scheduled, due in order, orphans and catch-up, next reads, and the rows waiting on a sender', async () => {
      const batch = await accepted(['A', 'B', 'C']);
      await store.releaseBatch(batch);
      for (const [line, state] of [[2, 'initial'], [3, 'processing'], [4, 'approved']] as const) {
        const r = await row(batch, line);
        await store.commitRow(batch, line, r.revision, { changes: { phase: line === 3 ? 'funded' : 'created', transaction_id: `tr_${line}`, state, heard_at: '2026-03-02T09:00:00.000Z' } });
      }
      await store.scheduleRead(batch, 2, 5_000, true);
      await store.scheduleRead(batch, 3, 1_000, false);
      expect((await store.dueReads(4_000, 10)).map((r) => r.line)).toEqual([3]);
      expect(await store.scheduleOrphans(2_000)).toBe(1);
      expect((await store.dueReads(5_000, 10)).map((r) => r.line)).toEqual([3, 4, 2]);
      expect((await row(batch, 2)).reads).toBe(1);
      expect(await store.catchUpReads('2026-03-02T10:00:00.000Z', 3_000)).toBe(1);
      expect((await store.nextReads(batch, 10)).map((r) => [r.line, r.next_read_at])).toEqual([[3, 1_000], [4, 2_000], [2, 3_000]]);
      expect((await store.rowsWaitingOnSender('S-A')).map((r) => r.line)).toEqual([2]);
      expect(await store.unsettledRows(batch)).toBe(3);
      expect(await store.progress(batch)).toMatchObject({ sendable: 3, created: 3, unsettled: 3, settled: 0 });
      expect((await store.allRowsInPhases(['funded'])).map((r) => r.line)).toEqual([3]);
    });

    it('results, settlement, recent batches, ledger rows', async () => {
      const batch = await accepted(['A', 'B']);
      const r = await row(batch, 2);
      await store.commitRow(batch, 2, r.revision, { changes: { phase: 'final', transaction_id: 'tr_9', state: 'paid', funded_at: '2026-03-02T09:01:00.000Z', paid_at: '2026-03-02T09:05:00.000Z', input_amount: '100', input_currency: 'USD' } });
      await store.movePhase(batch, 3, ['ready'], 'not_sent', 'insufficient_funds', 'ran out');
      const results = [];
      for await (const result of store.resultRows(batch)) results.push([result.line, result.phase, result.state, result.outcome, result.funded_at]);
      expect(results).toEqual([[2, 'final', 'paid', null, '2026-03-02T09:01:00.000Z'], [3, 'not_sent', null, 'insufficient_funds', null]]);
      expect(await store.unsettledRows(batch)).toBe(0);
      await store.settleBatch(batch, '2026-03-02T10:00:00.000Z');
      expect(await store.batch(batch)).toMatchObject({ status: 'settled', settled_at: '2026-03-02T10:00:00.000Z' });
      // Every row carries its batch's time: a row never sent is given it as its final time in the results.
      const times = [];
      for await (const result of store.resultRows(batch)) times.push([result.line, result.batch_time, result.invalid_fields]);
      expect(times).toEqual([[2, '2026-03-02T10:00:00.000Z', null], [3, '2026-03-02T10:00:00.000Z', null]]);
      expect((await store.openBatches()).length).toBe(0);
      expect((await store.recentBatches('2026-03-01T00:00:00.000Z')).map((b) => b.id)).toEqual([batch]);
      expect((await store.ledgerRows({ batch })).map((l) => [l.line, l.state])).toEqual([[2, 'paid'], [3, null]]);
      expect((await store.ledgerRows({ from: '2026-03-02T00:00:00.000Z', to: '2026-03-03T00:00:00.000Z' })).map((l) => [l.line, l.outcome])).toEqual([[2, null], [3, 'insufficient_funds']]);
      // The same rows in pages by keyset on (batch, line): a page of one, then the next after it, then none.
      const day = { from: '2026-03-02T00:00:00.000Z', to: '2026-03-03T00:00:00.000Z' };
      expect((await store.ledgerRowPage(day, null, 1)).map((l) => l.line)).toEqual([2]);
      expect((await store.ledgerRowPage(day, { batch, line: 2 }, 1)).map((l) => l.line)).toEqual([3]);
      expect(await store.ledgerRowPage(day, { batch, line: 3 }, 1)).toEqual([]);
      expect((await store.ledgerRowPage({ batch }, { batch, line: 2 }, 10)).map((l) => l.line)).toEqual([3]);
    });

    it('metrics figures: rows of open batches by phase and final state, batches awaiting approval, rows needing a person and their oldest change', async () => {
      expect(await store.metricsFigures(AT)).toEqual({ rows_by_phase: {}, final_by_state: {}, awaiting_approval: 0, oldest_awaiting_at: null, attention: 0, oldest_attention_at: null });
      const set = async (batch: string, line: number, changes: Parameters<Store['commitRow']>[3]['changes']): Promise<void> => {
        const r = await row(batch, line);
        expect(await store.commitRow(batch, line, r.revision, { changes })).toEqual({ kind: 'applied' });
      };
      const open = await accepted(['A', 'B', 'C', 'D', 'E']);
      await set(open, 2, { phase: 'final', transaction_id: 'tr_a', state: 'paid' });
      await set(open, 3, { phase: 'final', outcome: 'rejected_by_service' });
      await set(open, 4, { phase: 'funded', transaction_id: 'tr_c', state: 'stuck', observed_at: '2026-03-02T09:30:00.000Z', heard_at: '2026-03-02T11:00:00.000Z' });
      await set(open, 5, { phase: 'held', outcome: 'answer_mismatch', heard_at: '2026-03-02T10:00:00.000Z' });
      const awaiting = await accepted(['F'], 'f'.repeat(64));
      await store.requestApproval(awaiting, 'inbox', '2026-03-03T09:00:00.000Z');
      // A held row does not keep its batch open: it is counted while the batch is recent.
      const settled = await accepted(['G', 'H'], 'b'.repeat(64));
      await set(settled, 2, { phase: 'held', outcome: 'answer_mismatch', created_at: '2026-03-02T09:10:00.000Z' });
      await set(settled, 3, { phase: 'final', transaction_id: 'tr_h', state: 'paid' });
      await store.settleBatch(settled, '2026-03-02T12:00:00.000Z');
      expect(await store.metricsFigures('2026-03-01T00:00:00.000Z')).toEqual({
        rows_by_phase: { final: 2, funded: 1, held: 1, ready: 2 },
        final_by_state: { paid: 1, rejected_by_service: 1 },
        awaiting_approval: 1, oldest_awaiting_at: AT,
        attention: 3, oldest_attention_at: '2026-03-02T09:10:00.000Z',
      });
      expect(await store.metricsFigures('2026-03-05T00:00:00.000Z')).toMatchObject({ attention: 2, oldest_attention_at: '2026-03-02T09:30:00.000Z' });
    });

    it('webhook events: kept once per nonce, unapplied in order, outcomes counted', async () => {
      const event = (nonce: string) => ({ received_at: AT, nonce, webhook_id: 'wh', event_type: 'transaction.paid', object_id: 'tr_1', body: '{}' });
      const first = await store.recordWebhookEvent(event('n1'));
      expect(await store.recordWebhookEvent(event('n1'))).toBe('replayed');
      const second = await store.recordWebhookEvent(event('n2'));
      expect((await store.unappliedWebhookEvents(10)).map((e) => e.id)).toEqual([first, second]);
      await store.recordWebhookOutcome(first as number, 'applied', AT);
      await store.recordWebhookOutcome(first as number, 'again', AT);
      expect(await store.webhookEventCounts()).toEqual({ received: 2, pending: 1, outcomes: { applied: 1 } });
    });

    it('schedules, heartbeats and the workspace lease', async () => {
      expect(await store.lastScheduleRun('intake')).toBeNull();
      expect(await store.claimScheduleRun('intake', null, 1_000)).toBe(true);
      expect(await store.claimScheduleRun('intake', null, 1_500)).toBe(false);
      expect(await store.claimScheduleRun('intake', 1_000, 2_000)).toBe(true);
      expect(await store.claimScheduleRun('intake', 1_000, 2_500)).toBe(false);
      expect(await store.lastScheduleRun('intake')).toBe(2_000);
      await store.recordHeartbeat('engine', 3_000);
      expect(await store.lastHeartbeat('engine')).toBe(3_000);
      const holder = (token: string, at: number) => ({ token, holder: 'watch', pid: 1, host: 'h', acquired_at: at, renewed_at: at });
      expect(await store.acquireLease(holder('one', 0), () => true, 60_000)).toBeNull();
      expect(await store.acquireLease(holder('two', 1_000), () => true, 60_000)).toMatchObject({ token: 'one' });
      expect(await store.acquireLease(holder('two', 1_000), () => false, 60_000)).toBeNull();
      expect(await store.renewLease('one', 2_000)).toBe(false);
      expect(await store.renewLease('two', 2_000)).toBe(true);
      await store.releaseLease('two');
      expect(await store.acquireLease(holder('three', 3_000), () => true, 60_000)).toBeNull();
    });

    it('approvals and the audit trail', async () => {
      const batch = await accepted(['A']);
      await store.recordApproval({ batch_id: batch, person: 'ada', decision: 'approve', statement: '{}', signature: 'sig', reason: null, at: AT });
      expect((await store.approvalsOf(batch)).map((a) => [a.person, a.decision, a.signature])).toEqual([['ada', 'approve', 'sig']]);
      await store.setApprovalState(batch, 'approved', 'by ada');
      expect(await store.batch(batch)).toMatchObject({ approval: 'approved', approval_reason: 'by ada' });
      const rows = [];
      for await (const r of store.acceptedRows(batch)) rows.push([r.line, r.request.external_id]);
      expect(rows).toEqual([[2, 'A']]);
      await store.appendAudit({ at: AT, actor: 'ada', action: 'approved', subject: batch, details: { b: 1, a: 2 } });
      const r = await row(batch, 2);
      await store.commitRow(batch, 2, r.revision, { changes: { phase: 'creating' }, audits: [{ action: 'create_requested', at: AT, details: {} }] });
      await store.appendAudit({ at: AT, actor: 'paybatch', action: 'report_written', subject: 'r', details: {} });
      const entries = await store.auditEntries(0, 10);
      expect(entries.map((e) => [e.seq, e.action, e.subject])).toEqual([[1, 'approved', batch], [2, 'create_requested', `${batch} line 2`], [3, 'report_written', 'r']]);
      expect(entries[0]?.details).toBe('{"a":2,"b":1}');
      expect(entries[1]?.prev_hash).toBe(entries[0]?.hash);
      expect(await store.auditHead()).toEqual({ seq: 3, hash: entries[2]?.hash });
      expect(await store.auditHead('report_written')).toEqual({ seq: 2, hash: entries[1]?.hash });
      expect((await store.lastAudit('approved'))?.seq).toBe(1);
      // The deployment an approval is for: random, made at first start, the same at every read.
      const deployment = await store.deploymentId();
      expect(deployment).toMatch(/^[0-9a-f]{32}$/);
      expect(await store.deploymentId()).toBe(deployment);
    });

    it('console sign-ins: a code used once, sessions until they expire', async () => {
      await store.addConsoleCredential({ hash: 'c1', kind: 'code', person: 'ada', created_at: 0, expires_at: 1_000 });
      await store.addConsoleCredential({ hash: 's1', kind: 'session', person: 'ada', created_at: 0, expires_at: 5_000 });
      expect(await store.consoleCredential('c1', 500)).toMatchObject({ person: 'ada', kind: 'code' });
      expect(await store.useConsoleCode('c1', 2_000)).toBe(false);
      expect(await store.useConsoleCode('c1', 500)).toBe(true);
      expect(await store.useConsoleCode('c1', 600)).toBe(false);
      expect(await store.consoleCredential('c1', 700)).toBeUndefined();
      expect(await store.useConsoleCode('s1', 700)).toBe(false);
      expect(await store.consoleCredential('s1', 4_999)).toMatchObject({ person: 'ada', kind: 'session' });
      expect(await store.consoleCredential('s1', 5_000)).toBeUndefined();
      await store.deleteConsoleCredential('s1');
      expect(await store.consoleCredential('s1', 1)).toBeUndefined();
    });

    it('notifications: queued once per channel and key, claimed when due, retried, delivered or given up', async () => {
      const n = (channel: string, key: string) => ({ channel, event: 'batch_settled', dedupe_key: key, payload: '{}', created_at: 1_000 });
      expect(await store.enqueueNotification(n('mail', 'settled:B1'))).toBe(true);
      expect(await store.enqueueNotification(n('mail', 'settled:B1'))).toBe(false);
      expect(await store.enqueueNotification(n('hook', 'settled:B1'))).toBe(true);
      expect(await store.enqueueNotification(n('hook', 'settled:B2'))).toBe(true);
      const first = await store.claimDueNotifications(1_000, 61_000, 2);
      expect(first.map((x) => [x.channel, x.dedupe_key])).toEqual([['mail', 'settled:B1'], ['hook', 'settled:B1']]);
      // Claimed: not due again until the claim lapses.
      expect((await store.claimDueNotifications(1_000, 61_000, 10)).map((x) => x.dedupe_key)).toEqual(['settled:B2']);
      await store.markNotificationDelivered(first[0]?.id as number, 1_500);
      await store.markNotificationFailed(first[1]?.id as number, 'connection refused', 3_000, 1_500);
      expect((await store.claimDueNotifications(3_000, 63_000, 10)).map((x) => [x.id, x.attempts, x.last_error])).toEqual([[first[1]?.id, 1, 'connection refused']]);
      await store.markNotificationFailed(first[1]?.id as number, 'still refused', null, 4_000);
      // Delivered and given up are never due again; a claim that lapsed (its sender died) is.
      expect((await store.claimDueNotifications(100_000, 160_000, 10)).map((x) => x.dedupe_key)).toEqual(['settled:B2']);
      expect(await store.notificationCounts()).toEqual({ hook: { waiting: 1, delivered: 0, given_up: 1 }, mail: { waiting: 0, delivered: 1, given_up: 0 } });
    });
    it('corrections: rows keep the original they pay again; an invalid row keeps its values; a lineage paid twice shows it', async () => {
      const original = await store.beginBatch({ file_name: 'o.csv', sha256: 'c'.repeat(64), size_bytes: 10, policy: 'skip_invalid', received_at: AT, file_mtime_ms: 1, send_after: 0 });
      await store.addRows(original, [newRow(2, 'X'), { line: 3, external_id: 'BAD', request: null, errors: [{ line: 3, column: 'recipient_iban', code: 'iban_invalid_checksum', message: 'wrong' }], fields: { external_id: 'BAD', recipient_iban: 'DE00' } }]);
      await store.acceptBatch(original);
      const child = await store.beginBatch({ file_name: 'c.csv', sha256: 'd'.repeat(64), size_bytes: 10, policy: 'skip_invalid', received_at: AT, file_mtime_ms: 1, send_after: 0 });
      await store.addRows(child, [{ ...newRow(2, 'X~R1'), original: { batch: original, line: 2 } }, { ...newRow(3, 'BAD~R1'), original: { batch: original, line: 3 } }]);
      expect(await store.correctionLinks(child)).toEqual([
        { line: 2, external_id: 'X~R1', original_batch: original, original_line: 2 },
        { line: 3, external_id: 'BAD~R1', original_batch: original, original_line: 3 },
      ]);
      await store.setCorrectsBatch(child, original);
      expect((await store.batch(child))?.corrects_batch).toBe(original);
      expect((await store.correctionsOf(original, 2)).map((r) => [r.batch_id, r.line, r.external_id])).toEqual([[child, 2, 'X~R1']]);
      const kept: { line: number; fields: unknown; state: string | null }[] = [];
      for await (const row of store.rows(original)) kept.push({ line: row.line, fields: row.fields, state: row.state });
      expect(kept).toEqual([{ line: 2, fields: null, state: null }, { line: 3, fields: { external_id: 'BAD', recipient_iban: 'DE00' }, state: null }]);
      expect((await store.row(child, 2))?.original_batch).toBe(original);
      // Both the original and its correction paid (as a broken engine might): the lineage says so.
      for (const [batch, line] of [[original, 2], [child, 2]] as const) {
        const row = (await store.row(batch, line)) as PipelineRow;
        await store.commitRow(batch, line, row.revision, { changes: { phase: 'final', state: 'paid', transaction_id: `tr_${batch}_${line}`, funded_at: AT, paid_at: AT } });
      }
      const lineage = await lineageOf(store, child, 2);
      expect(lineage?.root).toEqual({ batch: original, line: 2, external_id: 'X' });
      expect(lineage?.paying).toBe(2);
    });
  });
}
