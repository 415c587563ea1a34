/**
 * Hostile: SIGKILL of a process while its checkpoint thread copies the log,
 * then the database reopened: intact, and every group commit the process was
 * told had committed is there. Also: a second process holding a read
 * transaction for 3 s beside the writer with the thread; once it ends the log
 * is cut back. Real child processes, a real SQLite file, real threads.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { builtStoreModule, scriptsFolderPerTest, sleep, SQLITE_MODULE } from '../helpers/checkpoints.js';


/** Group g sets line 2+k's next_read_at to g*100+k; "g" is printed once the group has committed. */
const WRITER = `
  import { statSync, writeSync } from 'node:fs';
  const { SqliteStore } = await import(${builtStoreModule('sqlite-store.js')});
  const [file, seconds] = process.argv.slice(2);
  const store = SqliteStore.open(file);
  const batch = await store.beginBatch({ file_name: 'a.csv', sha256: 'a'.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: '2026-03-02T09:00:00.000Z', file_mtime_ms: null, send_after: 0 });
  await store.addRows(batch, Array.from({ length: 20 }, (_, i) => ({ line: i + 2, external_id: 'E-' + i, errors: [], request: { external_id: 'E-' + i, type: 'bank', input_currency_code: 'USD', output_currency_code: 'GBP', output_amount_in_cents: '100', sender: { external_id: 'S-1' }, recipient: { country_code: 'GBR' } } })));
  await store.acceptBatch(batch);
  writeSync(1, 'batch ' + batch + '\\n');
  let said = false;
  const end = Date.now() + Number(seconds) * 1000;
  for (let g = 1; Date.now() < end; g++) {
    await Promise.all(Array.from({ length: 20 }, (_, k) => store.row(batch, 2 + k).then((r) => store.commitRow(batch, 2 + k, r.revision, { changes: { next_read_at: g * 100 + k, errors: [{ pad: 'x'.repeat(2000) }] } }))));
    writeSync(1, 'g ' + g + ' wal ' + statSync(file + '-wal').size + '\\n');
    if (!said && store.connection.checkpointer.running) { said = true; writeSync(1, 'running\\n'); }
  }
  await store.close();
  writeSync(1, 'closed\\n');
`;

const READER = `
  const { default: Database } = await import(${SQLITE_MODULE});
  const [file, ms] = process.argv.slice(2);
  const db = new Database(file, { readonly: true });
  db.exec('BEGIN');
  db.prepare('SELECT COUNT(*) FROM rows').get();
  setTimeout(() => { db.exec('COMMIT'); db.close(); }, Number(ms));
`;


describe('hostile: the checkpoint thread under SIGKILL and beside a reader', () => {
  const folder = scriptsFolderPerTest('paybatch-hostile-cpcrash-', { 'writer.mjs': WRITER, 'reader.mjs': READER });

  it('SIGKILL at random moments while the thread checkpoints: the database reopens sound, every acknowledged group commit there (8 kills)', async () => {
    const problems: string[] = [];
    for (let round = 0; round < 8; round++) {
      const file = join(folder(), `p${round}.db`);
      const child = spawn(process.execPath, [join(folder(), 'writer.mjs'), file, '30'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (chunk) => (out += chunk));
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      for (const end = Date.now() + 10_000; !out.includes('running') && Date.now() < end;) await sleep(10);
      expect(out).toContain('running');
      await sleep(50 + Math.random() * 700);
      child.kill('SIGKILL');
      await exited;
      const acked = Math.max(0, ...[...out.matchAll(/^g (\d+)/gm)].map((m) => Number(m[1])));
      const batch = /^batch (\S+)/m.exec(out)?.[1];
      const db = new Database(file);
      try {
        const check = (db.prepare('PRAGMA integrity_check').pluck().all() as string[]).join('; ');
        if (check !== 'ok') problems.push(`round ${round}: ${check}`);
        const rows = db.prepare('SELECT line, next_read_at FROM rows WHERE batch_id = ? ORDER BY line').all(batch) as { line: number; next_read_at: number | null }[];
        for (const { line, next_read_at } of rows) {
          if ((next_read_at ?? 0) < acked * 100 + (line - 2)) problems.push(`round ${round}: line ${line} at ${next_read_at}, acknowledged ${acked * 100 + line - 2}`);
        }
        if (rows.length !== 20) problems.push(`round ${round}: ${rows.length} rows`);
      } finally {
        db.close();
      }
    }
    expect(problems).toEqual([]);
  }, 60_000);

  it('a second process holds a read transaction for 3 s beside the writer with the thread: the log grows meanwhile (as without the thread) and is cut back to its 16 MB limit once the reader has gone', async () => {
    const file = join(folder(), 'r.db');
    const child = spawn(process.execPath, [join(folder(), 'writer.mjs'), file, '9'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    for (const end = Date.now() + 10_000; !out.includes('running') && Date.now() < end;) await sleep(10);
    expect(out).toContain('running');
    const reader = spawn(process.execPath, [join(folder(), 'reader.mjs'), file, '3000'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let readerErr = '';
    reader.stderr.on('data', (chunk) => (readerErr += chunk));
    const readerCode = await new Promise<number | null>((resolve) => reader.once('exit', (code) => resolve(code)));
    expect({ readerCode, readerErr }).toEqual({ readerCode: 0, readerErr: '' });
    const readerGoneAt = out.length;
    await sleep(2500);
    const after = [...out.slice(readerGoneAt).matchAll(/^g \d+ wal (\d+)/gm)].map((m) => Number(m[1]));
    const during = Math.max(...[...out.slice(0, readerGoneAt).matchAll(/^g \d+ wal (\d+)/gm)].map((m) => Number(m[1])));
    expect(await exited).toBe(0);
    expect(out).toContain('closed');
    // While the reader held its snapshot the log grew past its limit...
    expect(during).toBeGreaterThan(32 * 1024 * 1024);
    // ...and in the last second of writing after it, it is back at (or under) 16 MB plus a group's frames.
    expect(after.length).toBeGreaterThan(10);
    expect(Math.max(...after.slice(-10))).toBeLessThanOrEqual(17 * 1024 * 1024);
  }, 30_000);
});
