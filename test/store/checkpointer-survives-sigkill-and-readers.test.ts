/**
 * Hostile: SIGKILL of a process while its checkpoint thread copies the log,
 * then the database reopened: intact, and every group commit the process was
 * told had committed is there. Also: a second process holding a read
 * transaction beside the writer with the thread, until the log has grown past
 * twice its limit; once it ends the log is cut back. Each waits for what the writer says, never for a fixed time. Real child processes, a real SQLite file, real threads.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { builtStoreModule, scriptsFolderPerTest, SQLITE_MODULE, startChild, until } from '../helpers/checkpoints.js';


/**
 * Group g sets line 2+k's next_read_at to g*100+k; "g" is printed once the group has committed. It writes for at most
 * `seconds`, or until a file named `stop` beside the database appears.
 */
const WRITER = `
  import { existsSync, statSync, writeSync } from 'node:fs';
  import { dirname, join } from 'node:path';
  const { SqliteStore } = await import(${builtStoreModule('sqlite-store.js')});
  const [file, seconds] = process.argv.slice(2);
  const store = SqliteStore.open(file);
  const batch = await store.beginBatch({ file_name: 'a.csv', sha256: 'a'.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: '2026-03-02T09:00:00.000Z', file_mtime_ms: null, send_after: 0 });
  await store.addRows(batch, Array.from({ length: 20 }, (_, i) => ({ line: i + 2, external_id: 'E-' + i, errors: [], request: { external_id: 'E-' + i, type: 'bank', input_currency_code: 'USD', output_currency_code: 'GBP', output_amount_in_cents: '100', sender: { external_id: 'S-1' }, recipient: { country_code: 'GBR' } } })));
  await store.acceptBatch(batch);
  writeSync(1, 'batch ' + batch + '\\n');
  let said = false;
  const end = Date.now() + Number(seconds) * 1000;
  const stop = join(dirname(file), 'stop');
  for (let g = 1; Date.now() < end && !existsSync(stop); g++) {
    await Promise.all(Array.from({ length: 20 }, (_, k) => store.row(batch, 2 + k).then((r) => store.commitRow(batch, 2 + k, r.revision, { changes: { next_read_at: g * 100 + k, errors: [{ pad: 'x'.repeat(2000) }] } }))));
    writeSync(1, 'g ' + g + ' wal ' + statSync(file + '-wal').size + '\\n');
    if (!said && store.connection.checkpointer.running) { said = true; writeSync(1, 'running\\n'); }
  }
  await store.close();
  writeSync(1, 'closed\\n');
`;

/** Holds a read transaction (its snapshot) until a file named `release` beside the database appears. */
const READER = `
  import { existsSync, writeSync } from 'node:fs';
  import { dirname, join } from 'node:path';
  const { default: Database } = await import(${SQLITE_MODULE});
  const [file] = process.argv.slice(2);
  const db = new Database(file, { readonly: true });
  db.exec('BEGIN');
  db.prepare('SELECT COUNT(*) FROM rows').get();
  writeSync(1, 'holding\\n');
  const release = join(dirname(file), 'release');
  const timer = setInterval(() => {
    if (!existsSync(release)) return;
    clearInterval(timer);
    db.exec('COMMIT');
    db.close();
  }, 20);
`;


describe('hostile: the checkpoint thread under SIGKILL and beside a reader', () => {
  const folder = scriptsFolderPerTest('paybatch-hostile-cpcrash-', { 'writer.mjs': WRITER, 'reader.mjs': READER });

  it('SIGKILL at random moments while the thread checkpoints: the database reopens sound, every acknowledged group commit there (8 kills)', async () => {
    const problems: string[] = [];
    for (let round = 0; round < 8; round++) {
      const file = join(folder(), `p${round}.db`);
      const writer = startChild([join(folder(), 'writer.mjs'), file, '30']);
      // The thread running, and a group committed since: then a random moment, a random number of groups later (each
      // said by the writer: an event, not a time, so that a loaded machine moves the moment, not the test).
      await writer.waitFor(/^running\n(?:.*\n)*g \d+/m, 10_000, 'a group committed while the thread runs');
      const lastGroup = () => Math.max(0, ...[...writer.stdout().matchAll(/^g (\d+)/gm)].map((m) => Number(m[1])));
      const killAt = lastGroup() + Math.floor(Math.random() * 20);
      await until(() => lastGroup() >= killAt || writer.child.exitCode !== null, 10_000);
      writer.child.kill('SIGKILL');
      await writer.exited;
      const out = writer.stdout();
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

  it('a second process holds a read transaction beside the writer with the thread: the log grows meanwhile past twice its limit (as without the thread) and is cut back to its 16 MB limit once the reader has gone', async () => {
    const file = join(folder(), 'r.db');
    const writer = startChild([join(folder(), 'writer.mjs'), file, '55']);
    await writer.waitFor(/^running$/m, 10_000, 'the thread running');
    const reader = startChild([join(folder(), 'reader.mjs'), file]);
    await reader.waitFor(/^holding$/m, 10_000, 'the reader holding its snapshot');
    const heldFrom = writer.stdout().length;
    // While the reader holds its snapshot the log grows past its limit: waited for (a loaded machine writes slower),
    // then the reader lets go.
    const grown = (): boolean => [...writer.stdout().slice(heldFrom).matchAll(/^g \d+ wal (\d+)/gm)].some((m) => Number(m[1]) > 32 * 1024 * 1024);
    expect(await until(grown, 30_000), 'the log grown past 32 MB while the reader held its snapshot').toBe(true);
    writeFileSync(join(folder(), 'release'), '');
    expect({ end: await reader.exited, said: reader.stderr() }).toEqual({ end: { code: 0, signal: null }, said: '' });
    const readerGoneAt = writer.stdout().length;
    const groupsAfter = (): number[] => [...writer.stdout().slice(readerGoneAt).matchAll(/^g \d+ wal (\d+)/gm)].map((m) => Number(m[1]));
    // The log cut back once the reader has gone: ten groups in a row written at (or under) 16 MB plus a group's frames,
    // within 15 s; then the writer stops.
    const cutBack = (): boolean => groupsAfter().length >= 10 && Math.max(...groupsAfter().slice(-10)) <= 17 * 1024 * 1024;
    expect(await until(cutBack, 15_000), `${groupsAfter().length} groups after the reader, the last at ${groupsAfter().slice(-10).join(', ')}`).toBe(true);
    writeFileSync(join(folder(), 'stop'), '');
    expect(await writer.exited, writer.stderr()).toEqual({ code: 0, signal: null });
    expect(writer.stdout()).toContain('closed');
  }, 60_000);
});
