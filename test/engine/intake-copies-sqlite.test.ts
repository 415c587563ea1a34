/**
 * Two copies of one content read at once by one SQLite process (the daemon takes up to three files at a time): on
 * SQLite rows are made sendable as they are stored, so each copy holds some of them. Both are accepted, and every
 * row of the file is sendable exactly once; refusing one copy as the same content would leave its share unpaid.
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import type { IntakeDeps, IntakeOutcome } from '../../src/engine/intake.js';
import { takeFile } from '../../src/engine/intake.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Workspace } from '../../src/workspace/workspace.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { batchConfig } from '../helpers/validation.js';

/** Takes a.csv and b.csv of `workspace` at once (their markers required), each through its own view of the store. */
async function takeBoth(workspace: Workspace, storeFor: (role: 'a' | 'b') => SqliteStore, clock: ManualClock): Promise<[IntakeOutcome, IntakeOutcome]> {
  const intake = configSchema.parse({ intake: { marker: 'required' } }).intake;
  const deps = (role: 'a' | 'b'): IntakeDeps => ({ workspace, store: storeFor(role) as unknown as IntakeDeps['store'], batch: batchConfig(), intake, policy: 'reject_file', clock });
  return Promise.all([takeFile(join(workspace.folders.inbox, 'a.csv'), deps('a')), takeFile(join(workspace.folders.inbox, 'b.csv'), deps('b'))]);
}

const template = fileURLToPath(new URL('../../fixtures/templates/gbr-bank.csv', import.meta.url));

describe('two copies of one content read at once, on SQLite', () => {
  let dir: string;
  let workspace: Workspace;
  let store: SqliteStore;
  const clock = new ManualClock('2026-11-21T22:00:00.000Z');
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'paybatch-copies-'));
    workspace = openWorkspace(join(dir, 'ws'));
    store = SqliteStore.open(workspace.database);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('copy A stores its rows first, copy B is accepted first: every row sendable once', async () => {
    for (const name of ['a.csv', 'b.csv']) {
      copyFileSync(template, join(workspace.folders.inbox, name));
      writeFileSync(join(workspace.folders.inbox, `${name}.done`), '');
    }
    let aStored!: () => void;
    const aStoredP = new Promise<void>((r) => { aStored = r; });
    let bAccepted!: () => void;
    const bAcceptedP = new Promise<void>((r) => { bAccepted = r; });
    const proxy = (role: 'a' | 'b') => new Proxy(store, {
      get(target, key) {
        if (key === 'addRows') return async (...args: Parameters<SqliteStore['addRows']>) => {
          if (role === 'b') await aStoredP;
          await target.addRows(...args);
          if (role === 'a') aStored();
        };
        if (key === 'acceptBatch') return async (...args: Parameters<SqliteStore['acceptBatch']>) => {
          if (role === 'a') await bAcceptedP;
          const out = await target.acceptBatch(...args);
          if (role === 'b') bAccepted();
          return out;
        };
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const [a, b] = await takeBoth(workspace, proxy, clock);
    expect([a.kind, b.kind]).toEqual(['accepted', 'accepted']);
    const sendable = await store.allRowsInPhases(['ready']);
    expect(sendable.length).toBe(2);
  });
});

describe('two copies of one content read at once, on SQLite, their chunks interleaved', () => {
  it('500 rows: A stores the first chunk first, B the second; every row sendable once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'paybatch-copies-'));
    const workspace = openWorkspace(join(dir, 'ws'));
    const store = SqliteStore.open(workspace.database);
    const clock = new ManualClock('2026-11-21T22:00:00.000Z');
    try {
      const { readFileSync } = await import('node:fs');
      const [header, line] = readFileSync(template, 'utf8').split('\n');
      const body = Array.from({ length: 500 }, (_, i) => (line as string).replace('GBR-2026-0001', `GBR-R-${String(i).padStart(4, '0')}`).replace('1250.00', `${100 + i}.${String(i % 100).padStart(2, '0')}`)).join('\n');
      const text = `${header}\n${body}\n`;
      for (const name of ['a.csv', 'b.csv']) {
        writeFileSync(join(workspace.folders.inbox, name), text);
        writeFileSync(join(workspace.folders.inbox, `${name}.done`), '');
      }
      // turns: A1, B1, B2, A2
      const order = ['a', 'b', 'b', 'a'];
      let turn = 0;
      const waiters: (() => void)[] = [];
      const wake = () => { for (const w of waiters.splice(0)) w(); };
      const waitTurn = async (role: string) => { while (order[turn] !== role) await new Promise<void>((r) => waiters.push(r)); };
      const proxy = (role: 'a' | 'b') => new Proxy(store, {
        get(target, key) {
          if (key === 'addRows') return async (...args: Parameters<SqliteStore['addRows']>) => {
            if (turn < order.length) await waitTurn(role);
            await target.addRows(...args);
            turn += 1; wake();
          };
          const value = Reflect.get(target, key) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const [a, b] = await takeBoth(workspace, proxy, clock);
      expect([a.kind, b.kind]).toEqual(['accepted', 'accepted']);
      const sendable = await store.allRowsInPhases(['ready']);
      expect(sendable.length).toBe(500);
      expect(new Set(sendable.map((r) => r.external_id)).size).toBe(500);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
