/** Taking files in from the inbox: the cases intake.test.ts runs on one thread and intake-parallel.test.ts on worker threads. */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import type { IntakeDeps } from '../../src/engine/intake.js';
import { takeFile, takeWhenComplete } from '../../src/engine/intake.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Workspace } from '../../src/workspace/workspace.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { batchConfig } from '../helpers/validation.js';

const template = (name: string): string => fileURLToPath(new URL(`../../fixtures/templates/${name}`, import.meta.url));
const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/batch/${name}`, import.meta.url));

/** Takes a file once complete: looked at, then again once the stability interval passed on the manual clock. */
const take = (path: string, deps: IntakeDeps) => takeWhenComplete(path, deps, async (ms) => (deps.clock as ManualClock).advance(ms), deps.clock.now() + 3_600_000);

export function intakeCases(): void {
  describe('taking files in from the inbox', () => {
    let dir: string;
    let workspace: Workspace;
    let store: SqliteStore;
    let deps: IntakeDeps;
    const clock = new ManualClock('2026-11-21T22:00:00.000Z');

    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'paybatch-intake-'));
      workspace = openWorkspace(join(dir, 'ws'));
      store = SqliteStore.open(workspace.database);
      deps = { workspace, store, batch: batchConfig(), intake: configSchema.parse({}).intake, policy: 'reject_file', clock };
    });
    afterEach(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const drop = (source: string, name: string): string => {
      const path = join(workspace.folders.inbox, name);
      copyFileSync(source, path);
      clock.advance(1000);
      return path;
    };
    const rowsOf = async (batch: string) => {
      const rows = [];
      for await (const row of store.rows(batch)) rows.push(row);
      return rows;
    };

    it('claims a valid file into processing/ and stores its rows ready to send, in file order', async () => {
      const outcome = await take(drop(template('gbr-bank.csv'), 'payouts.csv'), deps);
      expect(outcome).toMatchObject({ kind: 'accepted', ready: 2, refused: 0, invalid: 0 });
      if (outcome.kind !== 'accepted') return;
      expect(readdirSync(workspace.folders.inbox)).toEqual([]);
      expect(existsSync(outcome.file)).toBe(true);
      expect(outcome.file.startsWith(workspace.folders.processing)).toBe(true);
      const batch = await store.batch(outcome.batch);
      expect(batch).toMatchObject({ status: 'accepted', file_name: 'payouts.csv', rows_total: 2, rows_valid: 2, policy: 'reject_file' });
      expect(batch?.sha256).toMatch(/^[0-9a-f]{64}$/);
      const rows = await rowsOf(outcome.batch);
      expect(rows.map((r) => [r.line, r.external_id, r.phase])).toEqual([[2, 'GBR-2026-0001', 'ready'], [3, 'GBR-2026-0002', 'ready']]);
      expect(rows[0]?.request).toMatchObject({ output_amount_in_cents: '125000', recipient: { sort_code: '089999' } });
    });

    it('an intake failing for another reason than its file gives back its external ids: the file dropped again is paid', async () => {
      // A database error after the rows are stored, as the acceptance begins.
      let failed = false;
      const failing = new Proxy(store, {
        get(target, property) {
          if (property === 'acceptBatch' && !failed) {
            return async () => {
              failed = true;
              throw new Error('disk I/O error');
            };
          }
          const value: unknown = Reflect.get(target, property);
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      });
      await expect(take(drop(template('gbr-bank.csv'), 'first.csv'), { ...deps, store: failing })).rejects.toThrow('disk I/O error');
      const [stuck] = await store.interruptedIntakes();
      expect((await rowsOf(stuck?.id as string)).map((r) => r.phase)).toEqual(['checking', 'checking']);
      const again = await take(drop(template('gbr-bank.csv'), 'again.csv'), deps);
      expect(again).toMatchObject({ kind: 'accepted', ready: 2, refused: 0 });
    });

    it('refuses the same content taken twice, unless forced', async () => {
      const first = await take(drop(template('nga-cash.csv'), 'monday.csv'), deps);
      expect(first.kind).toBe('accepted');
      const again = await take(drop(template('nga-cash.csv'), 'monday-again.csv'), deps);
      expect(again.kind).toBe('duplicate');
      if (again.kind !== 'duplicate') return;
      expect(again.earlier.id).toBe(first.kind === 'accepted' ? first.batch : '');
      expect(existsSync(again.file)).toBe(true);
      expect(readFileSync(again.noteFile, 'utf8')).toMatch(/same content .* as batch B20261121-[0-9a-f]{8}.*--force/s);
      const forced = await take(drop(template('nga-cash.csv'), 'monday-forced.csv'), { ...deps, force: true });
      expect(forced).toMatchObject({ kind: 'accepted', ready: 0, refused: 2 });
    });

    it('rejects a file with invalid rows under reject_file: nothing sendable, the file and its report in failed/', async () => {
      const outcome = await take(drop(fixture('mixed.csv'), 'mixed.csv'), deps);
      expect(outcome.kind).toBe('rejected');
      if (outcome.kind !== 'rejected') return;
      expect(outcome.file.startsWith(workspace.folders.failed)).toBe(true);
      expect(existsSync(outcome.file)).toBe(true);
      const text = readFileSync(outcome.reportFile, 'utf8');
      expect(text).toMatch(/5 rows, 1 valid, 4 invalid/);
      expect(text).toMatch(/uk_modulus_check_failed/);
      expect(text).toMatch(/Nothing of this file was sent/);
      expect(JSON.parse(readFileSync(`${outcome.file}.report.json`, 'utf8'))).toMatchObject({ batch: outcome.batch, invalid: 4 });
      expect((await store.batch(outcome.batch))?.status).toBe('rejected');
      expect((await rowsOf(outcome.batch)).map((r) => r.phase)).toEqual(['invalid', 'invalid', 'invalid', 'invalid', 'not_sent']);
      // The ids of a rejected file stay free: the corrected file goes through.
      const corrected = readFileSync(template('gbr-bank.csv'), 'utf8').replace('GBR-2026-0001', 'MIX-5');
      writeFileSync(join(workspace.folders.inbox, 'corrected.csv'), corrected);
      expect(await take(join(workspace.folders.inbox, 'corrected.csv'), deps)).toMatchObject({ kind: 'accepted', ready: 2 });
    });

    it('sends the valid rows under skip_invalid, keeping the invalid ones with their errors', async () => {
      const outcome = await take(drop(fixture('mixed.csv'), 'mixed.csv'), { ...deps, policy: 'skip_invalid' });
      expect(outcome).toMatchObject({ kind: 'accepted', ready: 1, invalid: 4 });
      if (outcome.kind !== 'accepted') return;
      const rows = await rowsOf(outcome.batch);
      expect(rows.map((r) => r.phase)).toEqual(['invalid', 'invalid', 'invalid', 'invalid', 'ready']);
      expect(rows[0]?.errors).toEqual([expect.objectContaining({ line: 2, code: 'duplicate_external_id' })]);
      expect(rows[1]?.errors.map((e) => e.code).sort()).toEqual(['invalid_date', 'uk_modulus_check_failed']);
    });

    it('moves a file that cannot be read as a batch to failed/, with the reason and line', async () => {
      const outcome = await take(drop(fixture('windows-1252.csv'), 'excel.csv'), deps);
      expect(outcome.kind).toBe('unreadable');
      if (outcome.kind !== 'unreadable') return;
      expect(existsSync(outcome.file)).toBe(true);
      expect(readFileSync(outcome.reportFile, 'utf8')).toMatch(/excel\.csv, line 3: cannot be read as a batch \(not_utf8\)/);
      expect((await store.batch(outcome.batch))?.status).toBe('rejected');
    });

    it('refuses rows whose external_id an earlier batch used, before anything is sent', async () => {
      await take(drop(template('eur-iban-bank.csv'), 'first.csv'), deps);
      const reused = readFileSync(template('eur-iban-bank.csv'), 'utf8').replace('EUR-2026-0002', 'EUR-2026-0099').replace('EUR-2026-0003', 'EUR-2026-0098');
      writeFileSync(join(workspace.folders.inbox, 'second.csv'), reused);
      // The same payments under new ids are possible duplicates, held by default (duplicates-intake.test.ts): not this test's subject.
      const outcome = await take(join(workspace.folders.inbox, 'second.csv'), { ...deps, batch: { ...deps.batch, duplicate_window: 'off' } });
      expect(outcome).toMatchObject({ kind: 'accepted', ready: 2, refused: 1 });
      if (outcome.kind !== 'accepted') return;
      expect((await rowsOf(outcome.batch)).map((r) => [r.external_id, r.phase, r.outcome])).toEqual([
        ['EUR-2026-0001', 'refused', 'external_id_already_used'],
        ['EUR-2026-0099', 'ready', null],
        ['EUR-2026-0098', 'ready', null],
      ]);
    });

    it('holds, as it takes a file in, a row paying the same account and amount as a row of an earlier batch; the same external_id is still refused', async () => {
      await take(drop(template('eur-iban-bank.csv'), 'first.csv'), deps);
      const reused = readFileSync(template('eur-iban-bank.csv'), 'utf8').replace('EUR-2026-0002', 'EUR-2026-0099').replace('EUR-2026-0003', 'EUR-2026-0098');
      writeFileSync(join(workspace.folders.inbox, 'second.csv'), reused);
      const outcome = await take(join(workspace.folders.inbox, 'second.csv'), deps);
      expect(outcome).toMatchObject({ kind: 'accepted', ready: 0, refused: 1 });
      if (outcome.kind !== 'accepted') return;
      expect((await rowsOf(outcome.batch)).map((r) => [r.external_id, r.phase, r.outcome])).toEqual([
        ['EUR-2026-0001', 'refused', 'external_id_already_used'],
        ['EUR-2026-0099', 'duplicate_hold', 'possible_duplicate'],
        ['EUR-2026-0098', 'duplicate_hold', 'possible_duplicate'],
      ]);
    });

    it('lets only one of two takers claim a file, and tells the other it is gone', async () => {
      const path = drop(template('nga-bank.csv'), 'race.csv');
      const first = await takeFile(path, deps);
      expect(first.kind).toBe('waiting');
      clock.advance(60_000);
      const seen = first.kind === 'waiting' ? first.seen : undefined;
      const outcomes = await Promise.all([takeFile(path, deps, seen), takeFile(path, deps, seen)]);
      expect(outcomes.map((o) => o.kind).sort()).toEqual(['accepted', 'gone']);
      expect(await take(join(workspace.folders.inbox, 'never-there.csv'), deps)).toEqual({ kind: 'gone', name: 'never-there.csv' });
    });
  });

  describe('an intake the process died in', () => {
    it('is rejected as interrupted, its file put back in the inbox, and taken in afresh', async () => {
      const { recoverInterruptedIntakes } = await import('../../src/engine/intake-recovery.js');
      const { claimName } = await import('../../src/engine/intake.js');
      const dir = mkdtempSync(join(tmpdir(), 'paybatch-interrupted-'));
      const workspace = openWorkspace(join(dir, 'ws'));
      const store = SqliteStore.open(workspace.database);
      try {
        const at = Date.parse('2026-11-21T23:00:00.000Z');
        // What a crash halfway through intake leaves: the file claimed, the batch begun, some rows stored.
        copyFileSync(template('eur-iban-bank.csv'), join(workspace.folders.processing, claimName('eur.csv', at)));
        // Its marker went with it when it was claimed: it comes back with it (the workspace may require one).
        writeFileSync(join(workspace.folders.processing, `${claimName('eur.csv', at)}.done`), '');
        const batch = await store.beginBatch({ file_name: 'eur.csv', sha256: 'a'.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: new Date(at).toISOString(), file_mtime_ms: null, send_after: 0 });
        await store.addRows(batch, [{ line: 2, external_id: 'EUR-2026-0001', request: null, errors: [] }]);
        const known = () => store.batchesInProcessing();
        expect(await recoverInterruptedIntakes({ workspace, store, knownBatches: known })).toEqual([batch]);
        expect((await store.batch(batch))?.status).toBe('rejected');
        expect(readdirSync(workspace.folders.inbox).sort()).toEqual(['eur.csv', 'eur.csv.done']);
        expect(readdirSync(workspace.folders.processing)).toEqual([]);
        const deps = { workspace, store, batch: batchConfig(), intake: configSchema.parse({ intake: { marker: 'required' } }).intake, policy: 'reject_file' as const, clock: new ManualClock(Date.now() + 60_000) };
        expect(await take(join(workspace.folders.inbox, 'eur.csv'), deps)).toMatchObject({ kind: 'accepted', ready: 3 });
        expect(await recoverInterruptedIntakes({ workspace, store, knownBatches: known })).toEqual([]);
        // A file claimed by a process that died before recording its batch goes back too.
        copyFileSync(template('nga-cash.csv'), join(workspace.folders.processing, claimName('cash.csv', at)));
        writeFileSync(join(workspace.folders.processing, `${claimName('cash.csv', at)}.done`), '');
        expect(await recoverInterruptedIntakes({ workspace, store, knownBatches: known })).toEqual([claimName('cash.csv', at)]);
        expect(readdirSync(workspace.folders.inbox).sort()).toEqual(['cash.csv', 'cash.csv.done']);
      } finally {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
