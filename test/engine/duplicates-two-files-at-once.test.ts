/**
 * Two files taken in at once by one process (watch takes up to three, watch/intake-queue.ts), on one SQLite store,
 * both reaching the possible-duplicate screen together: each one's accounts are sorted and written by payment a chunk
 * at a time, the event loop let run between chunks (sqlite/payments-in-order.ts), so the two writes take turns. Each
 * must write its own accounts, every one: a later file paying an account of the first file's last line again (the
 * same amount, another external_id) is held. With one temporary table shared by both, the second screen refilled it
 * under the first one's feet, and that later row was sent.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import type { IntakeDeps } from '../../src/engine/intake.js';
import { takeFile } from '../../src/engine/intake.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { validBatchLines } from '../helpers/batch-lines.js';
import { batchConfig } from '../helpers/validation.js';

const dir = mkdtempSync(join(tmpdir(), 'paybatch-two-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('two files screened at once: a later payment of the first file\'s last row again is held', async () => {
  const workspace = openWorkspace(join(dir, 'ws'));
  const store = SqliteStore.open(workspace.database);
  const clock = new ManualClock('2026-11-21T22:00:00.000Z');
  try {
    // More than two chunks of 5,000 accounts each.
    const n = 12_000;
    const { header, rows } = await validBatchLines(dir, 2 * n);
    const put = (name: string, lines: string[]): string => {
      writeFileSync(join(workspace.folders.inbox, name), `${header}\n${lines.join('\n')}\n`);
      writeFileSync(join(workspace.folders.inbox, `${name}.done`), '');
      return join(workspace.folders.inbox, name);
    };
    const first = put('a.csv', rows.slice(0, n));
    const second = put('b.csv', rows.slice(n, 2 * n));
    // Both files read, then both screened: each waits at the writing of its accounts until the other is there too.
    let arrived = 0;
    let bothThere!: () => void;
    const both = new Promise<void>((resolve) => {
      bothThere = resolve;
    });
    const meeting = new Proxy(store, {
      get(target, key) {
        if (key === 'indexRecipients') {
          return async (batch: string): Promise<void> => {
            arrived += 1;
            if (arrived === 2) bothThere();
            await both;
            await target.indexRecipients(batch);
          };
        }
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const deps: IntakeDeps = {
      workspace, store: meeting, batch: batchConfig(), intake: configSchema.parse({ intake: { marker: 'required' } }).intake, policy: 'reject_file', clock,
    };
    expect((await Promise.all([takeFile(first, deps), takeFile(second, deps)])).map((outcome) => outcome.kind)).toEqual(['accepted', 'accepted']);
    expect(arrived).toBe(2);
    // Every account of each file written by payment under its own batch: as many as it has by line.
    const count = (table: string): { batch_id: string; n: number }[] =>
      store.db.prepare(`SELECT batch_id, COUNT(*) AS n FROM ${table} GROUP BY batch_id ORDER BY batch_id`).all() as { batch_id: string; n: number }[];
    const byLine = count('row_recipients');
    expect(byLine.map((entry) => entry.n).every((n) => n > 10_000)).toBe(true);
    expect(count('recipient_payments')).toEqual(byLine);

    const again = put('c.csv', [(rows[n - 1] as string).replace(/^[^,]+/, 'AGAIN-1')]);
    clock.advance(60_000);
    const outcome = await takeFile(again, { ...deps, store });
    expect(outcome.kind).toBe('accepted');
    expect(await store.row((outcome as { batch: string }).batch, 2)).toMatchObject({ phase: 'duplicate_hold', outcome: 'possible_duplicate' });
  } finally {
    await store.close();
  }
});
