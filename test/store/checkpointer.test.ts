/**
 * SQLite's checkpoints on a thread of their own under load (checkpointer.ts):
 * started by a steady stream of group commits, copying the write-ahead log
 * into the database while the main connection's own are four times rarer; ended
 * when told, or after a quiet spell, and on failure the main connection takes
 * them back. Real threads, a real database file.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { BUSY_GROUPS_PER_SECOND, Checkpointer, TAIL_CHECKPOINT_PAGES } from '../../src/store/sqlite/checkpointer.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import type { SqliteDatabase } from '../../src/store/sqlite/database.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { autocheckpoint, builtStoreModule, busySecond, captureStderr, runChild, sleep, threads, until } from '../helpers/checkpoints.js';

describe('checkpoints on a thread of their own', () => {
  let dir: string;
  let file: string;
  let db: SqliteDatabase;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'paybatch-checkpointer-'));
    file = join(dir, 'paybatch.db');
    db = openDatabase(file);
    db.exec('CREATE TABLE pages (n INTEGER PRIMARY KEY, bytes BLOB)');
  });
  afterEach(() => {
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Writes `count` rows of 2 KB, a transaction each (every one a set of frames in the write-ahead log). */
  function write(count: number): void {
    const add = db.prepare('INSERT INTO pages (bytes) VALUES (randomblob(2048))');
    for (let i = 0; i < count; i++) add.run();
  }

  it('store.checkpoint_thread_groups_per_second sets how many group commits in a second start the thread', async () => {
    const checkpointer = new Checkpointer(db, file, { busyGroupsPerSecond: 3 });
    try {
      checkpointer.groupCommitted(2_000_000);
      checkpointer.groupCommitted(2_000_001);
      expect(checkpointer.running).toBe(false);
      checkpointer.groupCommitted(2_000_002);
      expect(checkpointer.running).toBe(true);
    } finally {
      await checkpointer.stop();
    }
  });

  it('a few commits start nothing; a second of steady group commits starts the thread, which copies the log into the database while the main connection checkpoints four times rarer', async () => {
    const checkpointer = new Checkpointer(db, file);
    try {
      for (let i = 0; i < BUSY_GROUPS_PER_SECOND - 1; i++) checkpointer.groupCommitted(1_000_000 + i);
      // The 100th, a second later: counted afresh.
      checkpointer.groupCommitted(1_001_000);
      expect(checkpointer.running).toBe(false);
      expect(autocheckpoint(db)).toBe(1000);
      const before = threads();
      busySecond(checkpointer);
      expect(checkpointer.running).toBe(true);
      expect(autocheckpoint(db)).toBe(TAIL_CHECKPOINT_PAGES);
      expect(threads()).toBeGreaterThan(before);
      // About 1,000 pages of 4 KB written to the log, under the main connection's threshold now: only the thread moves
      // them into the database file.
      const sizeBefore = statSync(file).size;
      write(2000);
      expect(await until(() => statSync(file).size > sizeBefore + 2048 * 1500)).toBe(true);
      await checkpointer.stop();
      expect(checkpointer.running).toBe(false);
      expect(autocheckpoint(db)).toBe(1000);
      expect(await until(() => threads() === before)).toBe(true);
      // Every row is there, read by a connection of its own.
      const reader = new Database(file, { readonly: true });
      expect(reader.prepare('SELECT COUNT(*) FROM pages').pluck().get()).toBe(2000);
      reader.close();
    } finally {
      await checkpointer.close();
    }
  });

  it('the log stays bounded while the thread runs: 60 MB written in small commits, the log never four times its 16 MB', async () => {
    // The thread's checkpoints alone never catch up with a writer committing meanwhile, so the log never started again
    // (a million-row run grew it to 775 MB): the main connection's own, four times rarer, let it.
    const checkpointer = new Checkpointer(db, file);
    try {
      busySecond(checkpointer);
      expect(checkpointer.running).toBe(true);
      const add = db.prepare('INSERT INTO pages (bytes) VALUES (randomblob(4096))');
      const ten = db.transaction(() => {
        for (let i = 0; i < 10; i++) add.run();
      });
      let largest = 0;
      for (let commit = 0; commit < 1500; commit++) {
        ten();
        largest = Math.max(largest, statSync(`${file}-wal`).size);
        if (commit % 50 === 0) await sleep(1);
      }
      // Past 16 MB while the thread holds the checkpoint at the main connection's turn (it tries again at its next commit).
      // A ceiling that catches the defect (a log that never starts again: 775 MB on a million rows), not a tuned figure:
      // under test:busy the thread, sharing two cores with two busy loops and three other files, let it reach 33.65 MB
      // once (a190ac7) against the 32 MB asked before. The log's size is a goal of bench:scale (under 64 MB).
      expect(largest).toBeLessThan(64 * 1024 * 1024);
    } finally {
      await checkpointer.close();
    }
  });

  it('the control: with no checkpoint at all, nothing of the log reaches the database file', () => {
    db.pragma('wal_autocheckpoint = 0');
    const sizeBefore = statSync(file).size;
    write(2000);
    // The control for the test above: nothing but a checkpoint moves pages into the file.
    expect(statSync(file).size).toBe(sizeBefore);
  });

  it('ends by itself after a quiet spell, and starts again under load', async () => {
    const checkpointer = new Checkpointer(db, file, { quietMs: 200 });
    try {
      busySecond(checkpointer);
      expect(checkpointer.running).toBe(true);
      expect(await until(() => !checkpointer.running, 3000)).toBe(true);
      expect(autocheckpoint(db)).toBe(1000);
      busySecond(checkpointer);
      expect(checkpointer.running).toBe(true);
    } finally {
      await checkpointer.close();
    }
    expect(checkpointer.running).toBe(false);
    // Closed for good: load starts nothing.
    busySecond(checkpointer);
    expect(checkpointer.running).toBe(false);
  });

  it('a thread that fails gives the checkpoints back to the main connection, says so once, and is not started again', async () => {
    const broken = join(dir, 'broken-worker.mjs');
    writeFileSync(broken, "throw new Error('no checkpoints today');\n");
    const { said, restore } = captureStderr();
    const checkpointer = new Checkpointer(db, file, { script: broken });
    try {
      busySecond(checkpointer);
      expect(await until(() => !checkpointer.running)).toBe(true);
      expect(autocheckpoint(db)).toBe(1000);
      busySecond(checkpointer);
      expect(checkpointer.running).toBe(false);
    } finally {
      restore();
      await checkpointer.close();
    }
    expect(said.filter((line) => line.includes('checkpoints on a thread of their own stopped'))).toHaveLength(1);
    expect(said.join('')).toContain('no checkpoints today');
  });

  it("the store starts it under a stream of group commits, and its close ends the thread before the database's", async () => {
    db.close();
    const store = SqliteStore.open(file);
    const before = threads();
    await store.beginBatch({ file_name: 'a.csv', sha256: 'a'.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: '2026-03-02T09:00:00.000Z', file_mtime_ms: null, send_after: 0 });
    const batch = (await store.interruptedIntakes())[0]?.id as string;
    await store.addRows(batch, Array.from({ length: 3 }, (_, i) => ({ line: i + 2, external_id: `E-${i}`, errors: [], request: { external_id: `E-${i}`, type: 'bank', input_currency_code: 'USD', output_currency_code: 'GBP', output_amount_in_cents: '100', sender: { external_id: 'S-1' }, recipient: { country_code: 'GBR' } } })));
    await store.acceptBatch(batch);
    // One commit awaited at a time: a group each, as fast as the store makes them.
    const started = Date.now();
    for (let i = 0; threads() === before && Date.now() - started < 5000; i++) {
      const row = await store.row(batch, 2);
      await store.commitRow(batch, 2, row?.revision as number, { changes: { next_read_at: i } });
    }
    expect(threads()).toBeGreaterThan(before);
    await store.close();
    expect(threads()).toBe(before);
  });

  it('a process that exits (process.exit) while the thread checkpoints ends with its own exit code, never aborted (20 exits at random moments)', () => {
    // A thread ended from outside while SQLite works can take the process down (V8's fatal error, exit 134): the exits
    // come at random moments while the main thread writes and the thread checkpoints every 50 ms.
    const script = join(dir, 'exit-while-checkpointing.mjs');
    writeFileSync(script, `
      const { openDatabase } = await import(${builtStoreModule('database.js')});
      const { Checkpointer, BUSY_GROUPS_PER_SECOND } = await import(${builtStoreModule('checkpointer.js')});
      const db = openDatabase(process.argv[2]);
      db.exec('CREATE TABLE IF NOT EXISTS pages (n INTEGER PRIMARY KEY, bytes BLOB)');
      const checkpointer = new Checkpointer(db, process.argv[2]);
      // One moment for the whole second's commits: a count that straddled a second's end started no thread.
      const now = Date.now();
      for (let i = 0; i < BUSY_GROUPS_PER_SECOND; i++) checkpointer.groupCommitted(now);
      if (!checkpointer.running) process.exit(2);
      const add = db.prepare('INSERT INTO pages (bytes) VALUES (randomblob(4096))');
      // A random moment while the thread runs: after a random number of rounds of writes (a count, not a time).
      let rounds = 5 + Math.floor(Math.random() * 60);
      const writeSome = () => {
        for (let i = 0; i < 50; i++) add.run();
        if (--rounds <= 0) process.exit(3);
        setImmediate(writeSome);
      };
      writeSome();
    `);
    db.close();
    const outcomes = Array.from({ length: 20 }, () => {
      const child = runChild([script, file], { timeoutMs: 30_000 });
      return `${child.status}/${child.signal}${child.stderr ? `: ${child.stderr.slice(0, 200)}` : ''}`;
    });
    expect(outcomes).toEqual(Array.from({ length: 20 }, () => '3/null'));
  }, 120_000);

  it("a command's last step, closing its store while the thread runs, waits for the thread's end: exit 0, not 13 (Node's exit for an await left unsettled)", () => {
    const script = join(dir, 'close-at-the-end.mjs');
    writeFileSync(script, `
      import { readdirSync } from 'node:fs';
      const { SqliteStore } = await import(${builtStoreModule('sqlite-store.js')});
      const store = SqliteStore.open(process.argv[2]);
      const threads = () => readdirSync('/proc/self/task').length;
      const before = threads();
      const batch = await store.beginBatch({ file_name: 'a.csv', sha256: 'a'.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: '2026-03-02T09:00:00.000Z', file_mtime_ms: null, send_after: 0 });
      await store.addRows(batch, [{ line: 2, external_id: 'E-1', errors: [], request: { external_id: 'E-1', type: 'bank', input_currency_code: 'USD', output_currency_code: 'GBP', output_amount_in_cents: '100', sender: { external_id: 'S-1' }, recipient: { country_code: 'GBR' } } }]);
      await store.acceptBatch(batch);
      for (let i = 0; threads() === before && i < 100000; i++) {
        const row = await store.row(batch, 2);
        await store.commitRow(batch, 2, row.revision, { changes: { next_read_at: i } });
      }
      if (threads() === before) process.exit(2);
      await store.close();
      console.log('closed');
    `);
    db.close();
    rmSync(file);
    const child = runChild([script, file], { timeoutMs: 30_000 });
    expect({ status: child.status, out: child.stdout.trim() }).toEqual({ status: 0, out: 'closed' });
  }, 60_000);

  it('closing right after the thread said it failed waits for its end, the process exiting 0 (not 13)', () => {
    // A thread that says it failed and ends only once the close has begun (the script leaves a file then): the close
    // comes in between, when the thread no longer counts as running but has not ended.
    const worker = join(dir, 'fails-slowly.mjs');
    const closing = join(dir, 'closing');
    writeFileSync(worker, `import { parentPort } from 'node:worker_threads';\nimport { existsSync } from 'node:fs';\nparentPort.postMessage({ failed: 'it failed: on purpose' });\nconst poll = setInterval(() => { if (existsSync(${JSON.stringify(closing)})) { clearInterval(poll); parentPort.close(); } }, 5);\n`);
    const script = join(dir, 'close-after-failure.mjs');
    writeFileSync(script, `
      const { openDatabase } = await import(${builtStoreModule('database.js')});
      const { Checkpointer, BUSY_GROUPS_PER_SECOND } = await import(${builtStoreModule('checkpointer.js')});
      const db = openDatabase(process.argv[2]);
      const checkpointer = new Checkpointer(db, process.argv[2], { script: process.argv[3] });
      const now = Date.now();
      for (let i = 0; i < BUSY_GROUPS_PER_SECOND; i++) checkpointer.groupCommitted(now);
      while (checkpointer.running) await new Promise((resolve) => setTimeout(resolve, 5));
      const closed = checkpointer.close();
      (await import('node:fs')).writeFileSync(${JSON.stringify(closing)}, '');
      await closed;
      console.log('closed');
    `);
    db.close();
    const child = runChild([script, file, worker], { timeoutMs: 30_000 });
    expect({ status: child.status, out: child.stdout.trim(), said: child.stderr.trim() })
      .toEqual({ status: 0, out: 'closed', said: "paybatch: warning: the database's checkpoints on a thread of their own stopped (it failed: on purpose); the main thread makes them again" });
  }, 60_000);
});
