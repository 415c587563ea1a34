/**
 * Hostile (second review): the checkpoint thread started and stopped 200 times
 * in one process (real threads, a real SQLite file, the worker from dist/):
 * resident memory must not keep growing; and process.exit() at every moment of
 * the thread's start (0 to 60 ms: Node starting it, better-sqlite3 loading,
 * the connection opening), or close() then exit in that window, ends the
 * process with its own exit code, never an abort.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builtStoreModule, runChildAsync } from '../helpers/checkpoints.js';


const CHURN = `
  import { readdirSync } from 'node:fs';
  const { openDatabase } = await import(${builtStoreModule('database.js')});
  const { Checkpointer, BUSY_GROUPS_PER_SECOND } = await import(${builtStoreModule('checkpointer.js')});
  const file = process.argv[2];
  const db = openDatabase(file);
  db.exec('CREATE TABLE pages (n INTEGER PRIMARY KEY, bytes BLOB)');
  const add = db.prepare('INSERT INTO pages (bytes) VALUES (randomblob(1024))');
  const c = new Checkpointer(db, file);
  const threads = () => readdirSync('/proc/self/task').length;
  const rss = [];
  let threadsAfter20 = 0;
  for (let i = 1; i <= 200; i++) {
    // One moment for the whole second's commits: a count that straddled a second's end started no thread.
    const second = Date.now() + i * 1000;
    for (let k = 0; k < BUSY_GROUPS_PER_SECOND; k++) c.groupCommitted(second);
    if (!c.running) { console.log('not running at ' + i); process.exit(2); }
    for (let k = 0; k < 50; k++) add.run();
    await new Promise((r) => setTimeout(r, 30));
    await c.stop();
    if (db.pragma('wal_autocheckpoint', { simple: true }) !== 1000) { console.log('autocheckpoint left at ' + db.pragma('wal_autocheckpoint', { simple: true })); process.exit(4); }
    if (i % 20 === 0) {
      globalThis.gc();
      await new Promise((r) => setTimeout(r, 50));
      rss.push(Math.round(process.memoryUsage().rss / 1048576));
      if (i === 20) threadsAfter20 = threads();
    }
  }
  await c.close();
  db.close();
  console.log(JSON.stringify({ rss, threadsAfter20, threadsAtEnd: threads() }));
`;

const EXIT = `
  const { openDatabase } = await import(${builtStoreModule('database.js')});
  const { Checkpointer, BUSY_GROUPS_PER_SECOND } = await import(${builtStoreModule('checkpointer.js')});
  const [file, ms, mode] = process.argv.slice(2);
  const db = openDatabase(file);
  db.exec('CREATE TABLE IF NOT EXISTS pages (n INTEGER PRIMARY KEY, bytes BLOB)');
  const c = new Checkpointer(db, file);
  const add = db.prepare('INSERT INTO pages (bytes) VALUES (randomblob(4096))');
  // One moment for the whole second's commits: a count that straddled a second's end started no thread (exit 2, seen once).
  const now = Date.now();
  for (let i = 0; i < BUSY_GROUPS_PER_SECOND; i++) c.groupCommitted(now);
  if (!c.running) process.exit(2);
  const until = Date.now() + Number(ms);
  if (mode === 'close') {
    // A close that hangs is caught by the test's bound on the child (runChildAsync kills it: a signal, not exit 4),
    // or by the process ending with nothing left to wait on (exit 0): no timer of its own here.
    setTimeout(async () => { await c.close(); db.close(); process.exit(4); }, Number(ms));
  } else {
    const writeSome = () => {
      for (let i = 0; i < 20; i++) add.run();
      if (Date.now() >= until) process.exit(3);
      setImmediate(writeSome);
    };
    writeSome();
  }
`;

// The bounds are for a machine kept busy by other work (the churn took more than 30 s there once): they catch a hang.
// The three run at once, each with a database file of its own in one folder: the churn's figures are its own process's,
// and an exit's moment is measured from its own thread's start, whatever else the machine is doing.
describe.concurrent('hostile (2): the checkpoint thread started and stopped many times; exits during its start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-cp2-churn-'));
  writeFileSync(join(dir, 'churn.mjs'), CHURN);
  writeFileSync(join(dir, 'exit.mjs'), EXIT);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const folder = (): string => dir;

  it('200 starts and stops in one process: resident memory flat after the first 20 (within 8 MB), threads back, 1000 after each stop', async () => {
    const child = await runChildAsync(['--expose-gc', join(folder(), 'churn.mjs'), join(folder(), 'churn.db')], { timeoutMs: 90_000 });
    expect(child.status, child.stderr + child.stdout).toBe(0);
    const { rss, threadsAfter20, threadsAtEnd } = JSON.parse(child.stdout.trim()) as { rss: number[]; threadsAfter20: number; threadsAtEnd: number };
    expect(rss).toHaveLength(10);
    expect(Math.max(...rss) - (rss[0] as number), JSON.stringify(rss)).toBeLessThanOrEqual(8);
    expect(threadsAtEnd).toBeLessThanOrEqual(threadsAfter20);
  }, 120_000);

  it('process.exit() at every moment of the thread start (0 to 60 ms, 2 ms apart) ends with its own code (3), never aborted', async () => {
    const outcomes: string[] = [];
    for (let n = 0; n < 31; n++) {
      const child = await runChildAsync([join(folder(), 'exit.mjs'), join(folder(), 'exit.db'), String(n * 2)]);
      outcomes.push(`${n * 2}ms ${child.status}/${child.signal}${child.stderr ? `: ${child.stderr.slice(0, 200)}` : ''}`);
    }
    expect(outcomes).toEqual(Array.from({ length: 31 }, (_, n) => `${n * 2}ms 3/null`));
  }, 120_000);

  it('close() during the thread start (0 to 60 ms), then exit: close resolves, exit 4', async () => {
    const outcomes: string[] = [];
    for (let n = 0; n < 21; n++) {
      const child = await runChildAsync([join(folder(), 'exit.mjs'), join(folder(), 'close.db'), String(n * 3), 'close']);
      outcomes.push(`${n * 3}ms ${child.status}/${child.signal}${child.stderr ? `: ${child.stderr.slice(0, 200)}` : ''}`);
    }
    expect(outcomes).toEqual(Array.from({ length: 21 }, (_, n) => `${n * 3}ms 4/null`));
  }, 120_000);
});
