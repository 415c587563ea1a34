/** SQLite's check of the whole database beside the work: never skipped, and every failure said as what it is. */
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { checkDatabaseInBackground, unchecked } from '../../src/store/sqlite/background-check.js';
import { ExitCode } from '../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'paybatch-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A database of one table over many pages; with `damaged`, one of its leaves says it is a page of no known kind. */
function database(name: string, damaged: boolean): string {
  const file = join(dir, name);
  const db = new Database(file);
  db.exec('CREATE TABLE filler (n INTEGER PRIMARY KEY, bytes BLOB)');
  const add = db.prepare('INSERT INTO filler (bytes) VALUES (zeroblob(600))');
  db.transaction(() => {
    for (let i = 0; i < 2000; i++) add.run();
  })();
  const leaves = db.prepare("SELECT pageno FROM dbstat WHERE name = 'filler' AND pagetype = 'leaf'").pluck().all() as number[];
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  db.close();
  if (damaged) {
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.from([0x77, 0x77, 0x77, 0x77]), 0, 4, ((leaves[Math.floor(leaves.length / 2)] as number) - 1) * pageSize);
    closeSync(fd);
  }
  return file;
}

describe('the database checked beside the work', () => {
  it('finds damage on its worker thread, and a sound database sound', async () => {
    expect(await checkDatabaseInBackground(database('sound.db', false)).found).toBeNull();
    const found = await checkDatabaseInBackground(database('damaged.db', true)).found;
    expect(found).toMatchObject({ exitCode: ExitCode.dataError, message: expect.stringMatching(/damaged.db is damaged \(.+\): stop paybatch/) });
  });

  it('checks on this thread when its worker cannot, and says so: damage is never left unseen', async () => {
    const said = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const broken = join(dir, 'broken-worker.mjs');
      writeFileSync(broken, "throw new Error('cannot start');\n");
      const found = await checkDatabaseInBackground(database('damaged-2.db', true), broken).found;
      expect(found).toMatchObject({ exitCode: ExitCode.dataError, message: expect.stringMatching(/is damaged/) });
      expect(await checkDatabaseInBackground(database('sound-2.db', false), join(dir, 'no-such-worker.mjs')).found).toBeNull();
      expect(said.mock.calls.map(([text]) => String(text)).join('')).toMatch(/the database's check on a thread of its own failed \(cannot start\); checking it here/);
    } finally {
      said.mockRestore();
    }
  });

  it('stopped before it answered: found is \'stopped\' (neither damage nor a failure), nothing is checked here, and the stop ends when its thread has', async () => {
    const said = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      // A worker that never answers, ticks into a file 40 times, then ends by itself.
      const silent = join(dir, 'silent-worker.mjs');
      writeFileSync(silent, "import { appendFileSync } from 'node:fs';\nimport { workerData } from 'node:worker_threads';\nlet n = 0;\nconst t = setInterval(() => { appendFileSync(`${workerData.file}.ticks`, '.'); if (++n === 40) clearInterval(t); }, 5);\n");
      const file = database('damaged-3.db', true);
      const ticks = (): number => (existsSync(`${file}.ticks`) ? statSync(`${file}.ticks`).size : 0);
      const waiting = checkDatabaseInBackground(file, silent);
      await vi.waitFor(() => expect(ticks()).toBeGreaterThan(0), { timeout: 5_000 });
      await waiting.stop();
      expect(await waiting.found).toBe('stopped');
      // Not cut short: the thread did all it does before the stop resolved.
      expect(ticks()).toBe(40);

      // The real worker, stopped before it answered, on a damaged database: the damage is not said.
      const real = checkDatabaseInBackground(database('damaged-4.db', true));
      await real.stop();
      expect(await real.found).toBe('stopped');
      expect(said.mock.calls.map(([text]) => String(text)).join('')).not.toMatch(/checking it here/);

      // Once it answered, a stop changes nothing.
      const answered = checkDatabaseInBackground(database('damaged-5.db', true));
      const found = await answered.found;
      await answered.stop();
      expect(found).toMatchObject({ exitCode: ExitCode.dataError });
    } finally {
      said.mockRestore();
    }
  });

  it('stopped in the middle of its pass over a damaged database, the process lives on (a thread terminated there took it down: exit 134)', () => {
    // In a process of its own: the failure is the whole process aborting. The stop is timed from this machine's own
    // figures to come halfway through the worker's pass: a thread's start (its check of a small sound database) and
    // the pass over the damaged one made here first. A fixed wait of 80 ms came after the answer on a fast machine (a
    // thread started and the pass ended within it).
    const script = join(dir, 'stop-mid-pass.mjs');
    const file = join(dir, 'large-damaged.db');
    const built = new URL('../../dist/src/store/sqlite/background-check.js', import.meta.url).href;
    writeFileSync(script, `
      import { createRequire } from 'node:module';
      import { openSync, writeSync, closeSync } from 'node:fs';
      const Database = createRequire(${JSON.stringify(new URL('../../package.json', import.meta.url).pathname)})('better-sqlite3');
      const { checkDatabaseInBackground } = await import(${JSON.stringify(built)});
      const { quickCheckFile } = await import(${JSON.stringify(new URL('../../dist/src/store/sqlite/database.js', import.meta.url).href)});
      const small = new Database(${JSON.stringify(join(dir, 'small-sound.db'))});
      small.exec('CREATE TABLE t (n INTEGER)');
      small.close();
      let started = performance.now();
      await checkDatabaseInBackground(${JSON.stringify(join(dir, 'small-sound.db'))}).found;
      const threadStartMs = performance.now() - started;
      const db = new Database(${JSON.stringify(file)});
      db.exec('CREATE TABLE filler (n INTEGER PRIMARY KEY, bytes BLOB)');
      const add = db.prepare('INSERT INTO filler (bytes) VALUES (zeroblob(600))');
      db.transaction(() => { for (let i = 0; i < 300000; i++) add.run(); })();
      const leaves = db.prepare("SELECT pageno FROM dbstat WHERE name = 'filler' AND pagetype = 'leaf'").pluck().all();
      const pageSize = db.pragma('page_size', { simple: true });
      db.close();
      const fd = openSync(${JSON.stringify(file)}, 'r+');
      writeSync(fd, Buffer.from([0x77, 0x77, 0x77, 0x77]), 0, 4, (leaves[Math.floor(leaves.length / 2)] - 1) * pageSize);
      closeSync(fd);
      started = performance.now();
      if (quickCheckFile(${JSON.stringify(file)}).length === 0) throw new Error('the damage was not found');
      const passMs = performance.now() - started;
      // On a busy machine the pass may end before the stop comes (the damage is then found, and said): tried again,
      // the stop sooner into the pass each time. Any stop mid-pass that took the process down ends every attempt.
      let found;
      for (let attempt = 1; attempt <= 6; attempt++) {
        const check = checkDatabaseInBackground(${JSON.stringify(file)});
        await new Promise((resolve) => setTimeout(resolve, threadStartMs + passMs / (attempt + 1)));
        await check.stop();
        found = await check.found;
        console.error('attempt', attempt, String(found).slice(0, 60));
        if (found === 'stopped') break;
      }
      console.log('stopped:', found);
    `);
    const child = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 60_000 });
    expect({ status: child.status, signal: child.signal, out: child.stdout.trim() }, child.stderr).toEqual({ status: 0, signal: null, out: 'stopped: stopped' });
  }, 90_000);

  it('says a check that failed as what it is: damage 65, a disk that refused the reads 74, anything else 65', () => {
    const error = (code: string): Error => Object.assign(new Error(`${code} happened`), { code });
    expect(unchecked('x.db', error('SQLITE_CORRUPT'))).toMatchObject({ exitCode: ExitCode.dataError, message: expect.stringMatching(/x\.db is damaged \(SQLITE_CORRUPT happened\)/) });
    expect(unchecked('x.db', error('SQLITE_IOERR_READ'))).toMatchObject({ exitCode: ExitCode.ioError, message: expect.stringMatching(/x\.db could not be read whole \(SQLITE_IOERR_READ\)/) });
    expect(unchecked('x.db', error('SQLITE_NOMEM'))).toMatchObject({ exitCode: ExitCode.dataError, message: expect.stringMatching(/x\.db could not be checked \(SQLITE_NOMEM happened\)/) });
  });
});
