/**
 * Hostile (second review): the worker opens the database by its path. A file
 * put in place for that open and the original moved back before the worker
 * looks at the path again would have the worker's connection on the other
 * file: it would then checkpoint the main connection's log (opened by name,
 * path-wal) into that file. (Before the fix, which looked only at the path
 * after the open, the other file grew from 8 KB to 2 MB and held the main
 * database's tables.) The timing (microseconds around the worker's open) is
 * forced by a preload (--import, which worker threads inherit) that renames at
 * the worker's looks at the path; everything else is the real worker from
 * dist/, real threads, real files. Expected: the file put in place is left
 * byte for byte as it was, and the main connection checkpoints itself.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtStoreModule, runChild, scriptsFolderPerTest, SQLITE_MODULE } from '../helpers/checkpoints.js';


const HOOK = `
  import fs from 'node:fs';
  import { syncBuiltinESMExports } from 'node:module';
  import { isMainThread } from 'node:worker_threads';
  const file = process.env.CP2_FILE;
  if (!isMainThread && file) {
    const real = fs.statSync;
    let looks = 0;
    fs.statSync = (p, o) => {
      if (p !== file) return real(p, o);
      looks += 1;
      if (process.env.CP2_MODE === 'around-open' && looks === 1) {
        // The worker's look before its open sees the original; the other file is put in place for the open itself...
        const seen = real(p, o);
        fs.renameSync(p, file + '.orig-aside');
        fs.renameSync(file + '.other', p);
        return seen;
      }
      if (process.env.CP2_MODE === 'around-open' && looks === 2) {
        // ...and moved aside, the original back, before its look after the open: only the descriptor tells.
        fs.renameSync(p, file + '.restored-aside');
        fs.renameSync(file + '.orig-aside', p);
      }
      return real(p, o);
    };
    const realReaddir = fs.readdirSync;
    let listings = 0;
    fs.readdirSync = (p, o) => {
      if (p === '/proc/self/fd' && process.env.CP2_MODE === 'unrelated-open' && ++listings === 2) {
        // Between the worker's two listings of what is open, around its open: a file of another kind opened (as the
        // main thread may open a result file meanwhile), and left open.
        const fd = fs.openSync(file + '.results.csv', 'w+');
        fs.writeSync(fd, 'line,state\\n');
        globalThis.keptOpen = fd;
      }
      return realReaddir(p, o);
    };
    syncBuiltinESMExports();
  }
`;
const SCRIPT = `
  import { existsSync, renameSync, readFileSync, statSync } from 'node:fs';
  const { default: Database } = await import(${SQLITE_MODULE});
  const { openDatabase } = await import(${builtStoreModule('database.js')});
  const { Checkpointer, BUSY_GROUPS_PER_SECOND } = await import(${builtStoreModule('checkpointer.js')});
  const file = process.env.CP2_FILE;
  const db = openDatabase(file);
  db.exec('CREATE TABLE pages (n INTEGER PRIMARY KEY, bytes BLOB)');
  const other = file + '.other';
  const b = new Database(other);
  b.pragma('journal_mode = WAL');
  b.exec("CREATE TABLE marker (x); INSERT INTO marker VALUES ('restored')");
  b.close();
  const otherBytes = readFileSync(other);
  db.pragma('wal_autocheckpoint = 0');
  const add = db.prepare('INSERT INTO pages (bytes) VALUES (randomblob(2048))');
  for (let i = 0; i < 500; i++) add.run();
  db.pragma('wal_autocheckpoint = 1000');
  const c = new Checkpointer(db, file);
  const now = Date.now();
  for (let i = 0; i < BUSY_GROUPS_PER_SECOND; i++) c.groupCommitted(now);
  const started = c.running;
  const sizeBefore = statSync(file).size;
  if (process.env.CP2_MODE === 'swapped') {
    // After the main thread's check: the original moved aside, another file put at the path (and left there while the
    // worker starts; moved aside again after, to be looked at).
    renameSync(file, file + '.orig-aside');
    renameSync(other, file);
  }
  // What the worker did, waited for (at most 10 s): where it refuses, the thread ends; where it may work, the database
  // grows by the pages it copied from the log.
  const done = process.env.CP2_MODE === 'unrelated-open' ? () => statSync(file).size > sizeBefore : () => !c.running;
  for (const end = Date.now() + 10_000; !done() && Date.now() < end;) await new Promise((r) => setTimeout(r, 10));
  if (process.env.CP2_MODE === 'swapped') {
    renameSync(file, file + '.restored-aside');
    renameSync(file + '.orig-aside', file);
  }
  const runningAfter = c.running;
  await c.close();
  db.close();
  if (process.env.CP2_MODE === 'unrelated-open') {
    console.log(JSON.stringify({ started, runningAfter }));
    process.exit(0);
  }
  // Still at the path when the worker refused at once (it never looked again): moved aside, to be read alone (at the
  // path, SQLite would read it with the main database's log).
  if (!existsSync(file + '.restored-aside')) {
    renameSync(file, file + '.restored-aside');
    renameSync(file + '.orig-aside', file);
  }
  const after = readFileSync(file + '.restored-aside');
  const r = new Database(file + '.restored-aside', { readonly: true });
  const tables = r.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
  r.close();
  console.log(JSON.stringify({ started, runningAfter, unchanged: after.equals(otherBytes), sizes: [otherBytes.length, after.length], tables }));
`;

describe("hostile (2): a rename pair inside the worker's open-then-stat window", () => {
  const folder = scriptsFolderPerTest('paybatch-cp2-toctou-', { 'hook.mjs': HOOK, 'toctou.mjs': SCRIPT });

  function run(mode: 'swapped' | 'around-open'): void {
    const child = runChild(['--import', join(folder(), 'hook.mjs'), join(folder(), 'toctou.mjs')], { env: { CP2_FILE: join(folder(), 'p.db'), CP2_MODE: mode } });
    expect(child.status, child.stderr).toBe(0);
    const outcome = JSON.parse(child.stdout.trim()) as { started: boolean; runningAfter: boolean; unchanged: boolean; tables: string[] };
    expect(outcome.started).toBe(true);
    expect({ runningAfter: outcome.runningAfter, unchanged: outcome.unchanged, tables: outcome.tables }, child.stdout).toEqual({ runningAfter: false, unchanged: true, tables: ['marker'] });
    expect(child.stderr).toContain('is no longer the file paybatch opened');
  }

  it('another file put in place between the main thread\'s look and the worker\'s: the worker refuses, nothing is written to it', () => {
    run('swapped');
  }, 20_000);

  it('a file of another kind opened in the window of the worker\'s open (a result file): not taken for another database, the thread runs, nothing said', () => {
    const child = runChild(['--import', join(folder(), 'hook.mjs'), join(folder(), 'toctou.mjs')], { env: { CP2_FILE: join(folder(), 'p.db'), CP2_MODE: 'unrelated-open' } });
    expect({ status: child.status, out: child.stdout.trim(), said: child.stderr }).toEqual({ status: 0, out: JSON.stringify({ started: true, runningAfter: true }), said: '' });
  }, 20_000);

  it('another file put in place just for the worker\'s open (the path looked right before and after): the descriptor SQLite opened tells, nothing is written to it', () => {
    run('around-open');
  }, 20_000);
});
