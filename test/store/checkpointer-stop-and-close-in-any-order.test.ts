/**
 * Hostile (second review): the Checkpointer's state machine with real threads
 * and a real SQLite file: a start while an older thread is still ending, stop()
 * twice and concurrently, close() while the thread is still loading, a failure
 * told after stop, group commits after close, the database closed before the
 * checkpointer, and the worker's own identity check. After every path:
 * wal_autocheckpoint is 1000 whenever no thread runs and the connection is open,
 * and the process's thread count is back where it was.
 */
import { readFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { Checkpointer, TAIL_CHECKPOINT_PAGES } from '../../src/store/sqlite/checkpointer.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import type { SqliteDatabase } from '../../src/store/sqlite/database.js';
import { autocheckpoint, busySecond, captureStderr as capture, sleep, threads, until } from '../helpers/checkpoints.js';


describe('hostile (2): the checkpointer state machine', () => {
  let dir: string;
  let file: string;
  let db: SqliteDatabase;
  let before: number;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'paybatch-cp2-state-'));
    file = join(dir, 'paybatch.db');
    db = openDatabase(file);
    db.exec('CREATE TABLE pages (n INTEGER PRIMARY KEY, bytes BLOB)');
    // Threads from an earlier test (Node's own) settle first.
    await sleep(50);
    before = threads();
  });
  afterEach(() => {
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stop() twice, concurrently, then a start while the stopped thread is still ending: the new thread keeps 4000 when the old one ends; close() waits for both', async () => {
    const checkpointer = new Checkpointer(db, file);
    const out = capture();
    try {
      busySecond(checkpointer);
      expect(checkpointer.running).toBe(true);
      // Its thread is up (an event, bounded), not a fixed wait.
      expect(await until(() => threads() > before)).toBe(true);
      const first = checkpointer.stop();
      const second = checkpointer.stop();
      expect(autocheckpoint(db)).toBe(1000);
      // Load again at once: a new thread while the first is ending.
      busySecond(checkpointer, Date.now() + 1000);
      expect(checkpointer.running).toBe(true);
      expect(autocheckpoint(db)).toBe(TAIL_CHECKPOINT_PAGES);
      await Promise.all([first, second]);
      // The older thread's end touched nothing of the new one's.
      expect(checkpointer.running).toBe(true);
      expect(autocheckpoint(db)).toBe(TAIL_CHECKPOINT_PAGES);
      await Promise.all([checkpointer.close(), checkpointer.close(), checkpointer.stop()]);
      expect(checkpointer.running).toBe(false);
      expect(autocheckpoint(db)).toBe(1000);
      expect(await until(() => threads() === before)).toBe(true);
    } finally {
      out.restore();
      await checkpointer.close();
    }
    expect(out.said.join('')).toBe('');
  });

  it('close() right after the start, while the thread is still loading its modules: resolves, the thread ends, no warning, 1000', async () => {
    const out = capture();
    try {
      for (let round = 0; round < 5; round++) {
        const checkpointer = new Checkpointer(db, file);
        busySecond(checkpointer);
        expect(checkpointer.running).toBe(true);
        await checkpointer.close();
        expect(checkpointer.running).toBe(false);
        expect(autocheckpoint(db)).toBe(1000);
        // Closed for good.
        busySecond(checkpointer, Date.now() + 1000);
        expect(checkpointer.running).toBe(false);
        expect(autocheckpoint(db)).toBe(1000);
      }
      expect(await until(() => threads() === before)).toBe(true);
    } finally {
      out.restore();
    }
    expect(out.said.join('')).toBe('');
  });

  it('a failure told by a thread after it was told to stop changes nothing: no warning, not marked failed, the next thread starts', async () => {
    // A worker that answers 'stop' by saying it failed, then ends.
    const worker = join(dir, 'fails-on-stop.mjs');
    writeFileSync(worker, "import { parentPort } from 'node:worker_threads';\nparentPort.on('message', (m) => { if (m === 'stop') { parentPort.postMessage({ failed: 'it failed: late' }); setTimeout(() => parentPort.close(), 50); } });\n");
    const checkpointer = new Checkpointer(db, file, { script: worker });
    const out = capture();
    try {
      busySecond(checkpointer);
      expect(await until(() => threads() > before)).toBe(true);
      await checkpointer.stop();
      expect(autocheckpoint(db)).toBe(1000);
      busySecond(checkpointer, Date.now() + 1000);
      expect(checkpointer.running).toBe(true);
      expect(autocheckpoint(db)).toBe(TAIL_CHECKPOINT_PAGES);
    } finally {
      await checkpointer.close();
      out.restore();
    }
    expect(autocheckpoint(db)).toBe(1000);
    expect(out.said.join('')).toBe('');
  });

  it('a thread that ends by itself without a word (not stopped, not failed): the main connection gets 1000 back', async () => {
    const worker = join(dir, 'ends.mjs');
    writeFileSync(worker, "import { parentPort } from 'node:worker_threads';\nsetTimeout(() => parentPort.close(), 50);\n");
    const checkpointer = new Checkpointer(db, file, { script: worker });
    try {
      busySecond(checkpointer);
      expect(autocheckpoint(db)).toBe(TAIL_CHECKPOINT_PAGES);
      expect(await until(() => !checkpointer.running)).toBe(true);
      expect(autocheckpoint(db)).toBe(1000);
    } finally {
      await checkpointer.close();
    }
  });

  it('the database closed before the checkpointer, with its thread running: close() resolves and the thread ends', async () => {
    const checkpointer = new Checkpointer(db, file);
    busySecond(checkpointer);
    expect(await until(() => threads() > before)).toBe(true);
    db.close();
    await checkpointer.close();
    expect(checkpointer.running).toBe(false);
    expect(await until(() => threads() === before)).toBe(true);
  });

  it('group commits counted after the database was closed (not yet the checkpointer): no thread is left running that close() does not wait for', async () => {
    const checkpointer = new Checkpointer(db, file);
    db.close();
    let thrown: unknown = null;
    try {
      busySecond(checkpointer);
    } catch (error) {
      thrown = error;
    }
    await checkpointer.close();
    // Whatever groupCommitted did, close() must leave no thread behind it and none "running".
    const state = { running: checkpointer.running, extraThreadsAfterClose: threads() - before, thrown: thrown === null ? null : String(thrown) };
    expect(state).toEqual({ running: false, extraThreadsAfterClose: 0, thrown: null });
  });

  it("the worker's own check: another file renamed over the path between the main thread's check and the worker's open: the worker refuses, warns once, 1000, and the other file is untouched", async () => {
    // The file put in place: a WAL database with a marker, its log empty.
    const other = join(dir, 'other.db');
    const b = new Database(other);
    b.pragma('journal_mode = WAL');
    b.exec("CREATE TABLE marker (x); INSERT INTO marker VALUES ('restored')");
    b.close();
    const otherBytes = readFileSync(other);
    // Frames in the main connection's log for a thread to copy.
    db.pragma('wal_autocheckpoint = 0');
    const add = db.prepare('INSERT INTO pages (bytes) VALUES (randomblob(2048))');
    for (let i = 0; i < 500; i++) add.run();
    db.pragma('wal_autocheckpoint = 1000');
    const checkpointer = new Checkpointer(db, file);
    const out = capture();
    try {
      busySecond(checkpointer);
      expect(checkpointer.running).toBe(true);
      // The same turn: the main thread has checked, the worker has not opened yet.
      renameSync(other, file);
      expect(await until(() => !checkpointer.running)).toBe(true);
      expect(autocheckpoint(db)).toBe(1000);
      // Failed for good: load starts nothing more.
      busySecond(checkpointer, Date.now() + 1000);
      expect(checkpointer.running).toBe(false);
    } finally {
      await checkpointer.close();
      out.restore();
    }
    expect(out.said.filter((l) => l.includes('checkpoints on a thread of their own stopped'))).toHaveLength(1);
    expect(out.said.join('')).toContain('is no longer the file paybatch opened');
    // Byte for byte the file put in place (opened through SQLite here it would be read with the old log beside it).
    expect(readFileSync(file).equals(otherBytes)).toBe(true);
  });
});
