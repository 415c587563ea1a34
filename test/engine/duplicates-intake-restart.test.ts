/**
 * The possible-duplicate check of an intake the process died in, taken in again (issue 42): each row's recipient
 * account is recorded as its page is stored, so the check reads no row back; an intake cut short mid-file and taken
 * again holds and lists the same rows as one never cut short, records each sendable row's account once, and the rows
 * of the interrupted batch are nobody's twin. On SQLite and on PostgreSQL (rows 'checking' until the acceptance).
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import type { IntakeDeps, IntakeOutcome } from '../../src/engine/intake.js';
import { takeWhenComplete } from '../../src/engine/intake.js';
import { recoverInterruptedIntakes } from '../../src/engine/intake-recovery.js';
import type { Store } from '../../src/store/port.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import type { Workspace } from '../../src/workspace/workspace.js';
import { gbrRowsBatch, sqliteOf } from '../helpers/engine.js';
import { freshDatabase, postgresAvailable } from '../helpers/postgres.js';
import { batchConfig } from '../helpers/validation.js';

const withPostgres = await postgresAvailable('the possible-duplicate check of an intake taken again');

/** A store of one kind, with the lines of a batch that have a recipient entry (read outside the store). */
interface Opened {
  store: Store;
  entryLines(batch: string): Promise<number[]>;
  done(): Promise<void>;
}

async function openSqlite(workspace: Workspace): Promise<Opened> {
  const store = SqliteStore.open(workspace.database);
  return {
    store,
    entryLines: async (batch) => sqliteOf(store).prepare('SELECT line FROM row_recipients WHERE batch_id = ? ORDER BY line').pluck().all(batch) as number[],
    done: () => store.close(),
  };
}

async function openPostgres(): Promise<Opened> {
  const database = await freshDatabase();
  const store = await PostgresStore.open(database.url);
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  return {
    store,
    entryLines: async (batch) => (await db.query<{ line: number }>('SELECT line FROM row_recipients WHERE batch_id = $1 ORDER BY line', [batch])).rows.map((r) => r.line),
    async done() {
      await db.end();
      await store.close();
      await database.drop();
    },
  };
}

/** The account a line of a GBR rows file pays. */
const accountOf = (text: string): string => (/,(\d{8}),current$/.exec(text) as RegExpExecArray)[1] as string;

/**
 * 600 rows (lines 2 to 601), each its own account but: line 60 pays line 50's, line 560 line 30's (a page apart);
 * lines 300 and 301 share an external_id (both made invalid once the file is read) and line 302 pays line 301's.
 * And a file of two rows paying the accounts of lines 10 and 500.
 */
function files(dir: string): { big: string; earlier: string } {
  const big = gbrRowsBatch(dir, 'big.csv', Array.from({ length: 600 }, (_, i) => `F-${i + 2}`));
  const lines = readFileSync(big, 'utf8').split('\n');
  const payLike = (line: number, like: number): void => {
    lines[line - 1] = (lines[line - 1] as string).replace(/,\d{8},current$/, `,${accountOf(lines[like - 1] as string)},current`);
  };
  payLike(60, 50);
  payLike(560, 30);
  lines[300 - 1] = (lines[300 - 1] as string).replace(/^"F-300"/, '"F-DUP"');
  lines[301 - 1] = (lines[301 - 1] as string).replace(/^"F-301"/, '"F-DUP"');
  payLike(302, 301);
  writeFileSync(big, lines.join('\n'));
  const earlierFile = gbrRowsBatch(dir, 'earlier.csv', ['OLD-1', 'OLD-2']);
  const earlier = readFileSync(earlierFile, 'utf8').split('\n');
  earlier[1] = (earlier[1] as string).replace(/,\d{8},current$/, `,${accountOf(lines[10 - 1] as string)},current`);
  earlier[2] = (earlier[2] as string).replace(/,\d{8},current$/, `,${accountOf(lines[500 - 1] as string)},current`);
  writeFileSync(earlierFile, earlier.join('\n'));
  return { big, earlier: earlierFile };
}

/** A store that dies at its second page of rows: every call after it fails, as in a process that is gone. */
function dyingAtSecondPage(store: Store): Store {
  let pages = 0;
  let dead = false;
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        if (property === 'addRows' && (pages += 1) === 2) dead = true;
        if (dead) throw new Error('the process died');
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** The same store, counting the pages of rows read back. */
function countingReads(store: Store, reads: { pages: number }): Store {
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      if (property === 'rows') reads.pages += 1;
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
}

interface Taken {
  earlier: string;
  batch: string;
  rows: (string | number | null)[][];
  found: (string | number | null)[][];
  entries: number[];
}

const onPostgres = (_: Workspace): Promise<Opened> => openPostgres();

// Checked on this thread, and on worker threads (however small the file: the rows' accounts are made there then).
describe.each([
  { kind: 'SQLite', open: openSqlite, skip: false, threads: 'one thread', parallel_min_bytes: 1 << 30 },
  { kind: 'SQLite', open: openSqlite, skip: false, threads: 'worker threads', parallel_min_bytes: 0 },
  { kind: 'PostgreSQL', open: onPostgres, skip: !withPostgres, threads: 'one thread', parallel_min_bytes: 1 << 30 },
  { kind: 'PostgreSQL', open: onPostgres, skip: !withPostgres, threads: 'worker threads', parallel_min_bytes: 0 },
])('the possible-duplicate check of an intake taken again: $kind, checked on $threads', ({ open, skip, parallel_min_bytes }) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setUp(): Promise<{ workspace: Workspace; opened: Opened; deps: IntakeDeps; dir: string; take(file: string, name: string, store?: Store): Promise<IntakeOutcome> }> {
    const dir = mkdtempSync(join(tmpdir(), 'paybatch-restart-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const workspace = openWorkspace(join(dir, 'ws'));
    const opened = await open(workspace);
    cleanups.push(() => opened.done());
    const clock = new ManualClock('2026-11-21T22:00:00.000Z');
    const deps: IntakeDeps = { workspace, store: opened.store, batch: batchConfig({ parallel_min_bytes }), intake: configSchema.parse({}).intake, policy: 'skip_invalid', clock };
    const take = (file: string, name: string, store: Store = opened.store): Promise<IntakeOutcome> => {
      const path = join(workspace.folders.inbox, name);
      copyFileSync(file, path);
      clock.advance(1000);
      return takeAgain(path, { ...deps, store });
    };
    const takeAgain = (path: string, d: IntakeDeps): Promise<IntakeOutcome> => takeWhenComplete(path, d, async (ms) => clock.advance(ms), clock.now() + 3_600_000);
    return { workspace, opened, deps, dir, take };
  }

  async function described(opened: Opened, earlier: string, batch: string): Promise<Taken> {
    const rows = [];
    for await (const row of opened.store.rows(batch)) rows.push([row.line, row.external_id, row.phase, row.outcome]);
    const whose = (id: string): string => (id === earlier ? 'earlier' : id === batch ? 'itself' : id);
    const found = (await opened.store.possibleDuplicates(batch)).map((d) => [d.line, d.external_id, d.action, whose(d.twin.batch_id), d.twin.line, d.twin.external_id]);
    return { earlier, batch, rows, found, entries: await opened.entryLines(batch) };
  }

  /** The intake of the big file, never cut short. */
  async function uninterrupted(): Promise<Taken> {
    const { opened, dir, take } = await setUp();
    const { big, earlier } = files(dir);
    const first = await take(earlier, 'earlier.csv');
    const outcome = await take(big, 'big.csv');
    expect(outcome).toMatchObject({ kind: 'accepted', ready: 594, invalid: 2 });
    return described(opened, (first as { batch: string }).batch, (outcome as { batch: string }).batch);
  }

  it.skipIf(skip)('holds the same rows as an intake never cut short, records each account once, and reads no row back', async () => {
    const whole = await uninterrupted();
    // Held: the rows paying what the earlier batch pays (in flight there) and the later of two lines paying the same;
    // line 302 pays what only line 301 paid, which was stored sendable and made invalid after: nobody's twin.
    expect(whole.found).toEqual([
      [10, 'F-10', 'hold', 'earlier', 2, 'OLD-1'],
      [60, 'F-60', 'hold', 'itself', 50, 'F-50'],
      [500, 'F-500', 'hold', 'earlier', 3, 'OLD-2'],
      [560, 'F-560', 'hold', 'itself', 30, 'F-30'],
    ]);
    expect(whole.rows.filter((r) => r[1] === 'F-DUP')).toEqual([[300, 'F-DUP', 'invalid', null], [301, 'F-DUP', 'invalid', null]]);
    expect(whole.entries).toEqual(Array.from({ length: 600 }, (_, i) => i + 2).filter((line) => line !== 300 && line !== 301));

    const { workspace, opened, deps, dir, take } = await setUp();
    const { big, earlier } = files(dir);
    const first = (await take(earlier, 'earlier.csv')) as { batch: string };
    // The process dies as the second page of rows is stored: the first page (250 rows) is in the store.
    await expect(take(big, 'big.csv', dyingAtSecondPage(opened.store))).rejects.toThrow('the process died');
    const [cut] = await opened.store.interruptedIntakes();
    const cutBatch = cut?.id as string;
    expect(await opened.entryLines(cutBatch)).toHaveLength(250);
    // The next start: rejected as interrupted, its file back in the inbox, taken in afresh.
    expect(await recoverInterruptedIntakes({ workspace, store: opened.store, knownBatches: () => opened.store.batchesInProcessing() })).toEqual([cutBatch]);
    const reads = { pages: 0 };
    const again = await takeWhenComplete(join(workspace.folders.inbox, 'big.csv'), { ...deps, store: countingReads(opened.store, reads) },
      async (ms) => (deps.clock as ManualClock).advance(ms), deps.clock.now() + 3_600_000);
    expect(again).toMatchObject({ kind: 'accepted', ready: 594, invalid: 2 });
    // The check found its twins in the index of accounts, not by reading the batch's rows back.
    expect(reads.pages).toBe(0);

    const restarted = await described(opened, first.batch, (again as { batch: string }).batch);
    expect(restarted.found).toEqual(whole.found);
    expect(restarted.rows).toEqual(whole.rows);
    expect(restarted.entries).toEqual(whole.entries);
    // The interrupted batch's rows ended unsent: nobody's twin, whatever was recorded of them.
    for await (const row of opened.store.rows(cutBatch)) expect(row.phase).toBe('not_sent');
    expect(restarted.found.some((f) => f[3] === cutBatch)).toBe(false);
  });
});
