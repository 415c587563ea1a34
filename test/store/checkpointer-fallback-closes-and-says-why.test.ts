/**
 * Hostile: the database file is gone from its path when load would start the
 * checkpoint thread, and the command then closes its store, as every command
 * does at its end. Real child processes, a real SQLite file.
 *
 * Expected: no thread (the path no longer holds the file paybatch opened), the
 * process ends with exit 0 after close() resolves, and the warning says why.
 * (A thread that fails after it started: test/store/checkpointer.test.ts.)
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtStoreModule, runChild, scriptsFolderPerTest } from '../helpers/checkpoints.js';


const SCRIPT = `
  import { rmSync } from 'node:fs';
  const { SqliteStore } = await import(${builtStoreModule('sqlite-store.js')});
  const file = process.argv[2];
  const store = SqliteStore.open(file);
  const batch = await store.beginBatch({ file_name: 'a.csv', sha256: 'a'.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: '2026-03-02T09:00:00.000Z', file_mtime_ms: null, send_after: 0 });
  await store.addRows(batch, [{ line: 2, external_id: 'E-1', errors: [], request: { external_id: 'E-1', type: 'bank', input_currency_code: 'USD', output_currency_code: 'GBP', output_amount_in_cents: '100', sender: { external_id: 'S-1' }, recipient: { country_code: 'GBR' } } }]);
  await store.acceptBatch(batch);
  // The database file is removed (an operator's mistake, a cleaner): under load, no thread can open it.
  rmSync(file);
  let i = 0;
  while (!store.connection.checkpointer.failed && i < 200000) {
    const row = await store.row(batch, 2);
    await store.commitRow(batch, 2, row.revision, { changes: { next_read_at: ++i } });
  }
  if (!store.connection.checkpointer.failed) process.exit(2);
  // The command's last step.
  await store.close();
  console.log('closed');
`;

describe('hostile: the checkpoint thread fails, then the store is closed', () => {
  const folder = scriptsFolderPerTest('paybatch-hostile-cpfail-', { 'fail-then-close.mjs': SCRIPT });

  function once(n: number): { status: number | null; out: string; err: string } {
    const file = join(folder(), `p${n}.db`);
    const child = runChild([join(folder(), 'fail-then-close.mjs'), file]);
    return { status: child.status, out: child.stdout.trim(), err: child.stderr };
  }

  it('close() after the fallback resolves and the process exits 0 (not 13, an unsettled await)', () => {
    const runs = Array.from({ length: 10 }, (_, n) => once(n));
    expect(runs.map((r) => `${r.status} ${r.out}`)).toEqual(Array.from({ length: 10 }, () => '0 closed'));
  }, 60_000);

  it('the warning says why no thread checkpoints (it said "it failed: undefined" when the thread could not open the file)', () => {
    const run = once(100);
    const warning = run.err.split('\n').find((line) => line.includes('checkpoints on a thread of their own stopped'));
    expect(warning).toMatch(/\(\S+p100\.db is no longer the file paybatch opened\)/);
  }, 20_000);
});
