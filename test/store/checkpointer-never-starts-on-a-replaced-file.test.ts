/**
 * Hostile: the database file is replaced (renamed over: a backup restored)
 * while a process keeps writing through its old connection. The checkpoint
 * thread ends after a quiet spell; when load comes back a new thread opens the
 * database by its path, i.e. the new file, together with the old database's
 * -wal and -shm (never renamed), and copies the old database's pages into the
 * new file. Control: the same steps with the store's checkpointer removed.
 * Real child processes, a real SQLite file, the real worker from dist/.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { builtStoreModule, runChild, scriptsFolderPerTest, SQLITE_MODULE } from '../helpers/checkpoints.js';


const SCRIPT = `
  import { copyFileSync, renameSync } from 'node:fs';
  const { default: Database } = await import(${SQLITE_MODULE});
  const { SqliteStore } = await import(${builtStoreModule('sqlite-store.js')});
  const [file, other, mode] = process.argv.slice(2);
  const { Checkpointer } = await import(${builtStoreModule('checkpointer.js')});
  const store = SqliteStore.open(file);
  // The thread ends after half a second without a group commit (5 s in production), and starts at 5 group commits in a
  // second (100): the quiet spell below is short, and the load starts it however slow the machine.
  const checkpointer = mode === 'control' ? null : new Checkpointer(store.connection.db, file, { quietMs: 500, busyGroupsPerSecond: 5 });
  store.connection.checkpointer = checkpointer;
  const rows = (sha, n) => Array.from({ length: n }, (_, i) => ({ line: i + 2, external_id: 'E-' + sha + i, errors: [], request: { external_id: 'E-' + sha + i, type: 'bank', input_currency_code: 'USD', output_currency_code: 'GBP', output_amount_in_cents: '100', sender: { external_id: 'S-1' }, recipient: { country_code: 'GBR' } } }));
  async function batchOf(sha, n) {
    const batch = await store.beginBatch({ file_name: sha + '.csv', sha256: sha.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: '2026-03-02T09:00:00.000Z', file_mtime_ms: null, send_after: 0 });
    await store.addRows(batch, rows(sha, n));
    await store.acceptBatch(batch);
    return batch;
  }
  const batch = await batchOf('a', 50);
  let i = 0;
  /** One round of load: twenty commits at once, each rewriting a row with 3 kB. */
  const round = () => Promise.all(Array.from({ length: 20 }, (_, k) => store.row(batch, 2 + k).then((r) => store.commitRow(batch, 2 + k, r.revision, { changes: { next_read_at: ++i, errors: [{ pad: 'x'.repeat(3000) }] } }))));
  /** Rounds of load until done() (at most 20 s), or \`rounds\` of them without a thread (control). */
  async function loadUntil(done, rounds) {
    if (!checkpointer) {
      for (let n = 0; n < rounds; n++) await round();
      return;
    }
    for (const end = Date.now() + 20_000; !done() && Date.now() < end;) await round();
  }
  await loadUntil(() => checkpointer.running, 50);
  const startedFirst = store.connection.checkpointer?.running ?? 'control';
  // The file put in its place: a sound database in WAL mode with a table of its own.
  const b = new Database(other);
  b.pragma('journal_mode = WAL');
  b.exec("CREATE TABLE marker (x); INSERT INTO marker VALUES ('restored')");
  b.close();
  // A quiet spell until the thread has ended (at most 10 s).
  for (const end = Date.now() + 10_000; store.connection.checkpointer?.running && Date.now() < end;) await new Promise((resolve) => setTimeout(resolve, 20));
  const endedInQuiet = store.connection.checkpointer ? !store.connection.checkpointer.running : 'control';
  renameSync(other, file);
  // Load comes back: the thread would start now, and is refused (said once) instead.
  await batchOf('b', 300);
  await loadUntil(() => checkpointer.fallenBack, 100);
  const startedAgain = store.connection.checkpointer?.running ?? 'control';
  // The file now at the path, as it is on disk while the process still runs.
  copyFileSync(file, file + '.snapshot');
  await store.close();
  console.log(JSON.stringify({ startedFirst, endedInQuiet, startedAgain }));
`;

function inspect(file: string): string {
  try {
    const db = new Database(file, { readonly: true });
    try {
      const check = (db.prepare('PRAGMA integrity_check').pluck().all() as string[]).join('; ');
      const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]).join(',');
      return `${check} [${tables}]`;
    } finally {
      db.close();
    }
  } catch (error) {
    return `error: ${(error as Error).message}`;
  }
}

describe('hostile: database file replaced beside a running writer', () => {
  const folder = scriptsFolderPerTest('paybatch-hostile-cprepl-', { 'replace.mjs': SCRIPT });

  function run(mode: 'thread' | 'control'): { status: number | null; out: string; said: string; snapshot: string } {
    const file = join(folder(), `${mode}.db`);
    const child = runChild([join(folder(), 'replace.mjs'), file, join(folder(), `${mode}-other.db`), mode], { timeoutMs: 60_000, cwd: new URL('../..', import.meta.url).pathname });
    return { status: child.status, out: child.stdout.trim(), said: child.stderr.trim(), snapshot: inspect(`${file}.snapshot`) };
  }

  it('control (no checkpoint thread): the file put in place stays a sound database of its own while the old process writes', () => {
    const control = run('control');
    expect(control.status).toBe(0);
    expect(control.snapshot).toBe('ok [marker]');
  }, 60_000);

  it('with the thread: no thread starts on the file put in place (not the one the main connection has open): the main connection checkpoints, it says so once, and the new file stays sound', () => {
    const thread = run('thread');
    expect(thread.status).toBe(0);
    expect(JSON.parse(thread.out)).toEqual({ startedFirst: true, endedInQuiet: true, startedAgain: false });
    expect(thread.said).toMatch(/^paybatch: warning: the database's checkpoints on a thread of their own stopped \(\S+thread\.db is no longer the file paybatch opened\); the main thread makes them again$/);
    expect(thread.snapshot).toBe('ok [marker]');
  }, 60_000);
});
