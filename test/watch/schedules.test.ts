import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { Schedules } from '../../src/watch/schedules.js';

const nightly = { cron: '0 2 * * *', time_zone: 'Europe/London' };

describe('schedules (croner, injected clock)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-schedules-'));
  const stores: SqliteStore[] = [];
  /** A store per test; `shared` reopens the previous test's, as a restarted daemon does. */
  const store = (shared = false): SqliteStore => {
    const s = SqliteStore.open(join(dir, `paybatch-${shared ? stores.length : stores.length + 1}.db`));
    stores.push(s);
    return s;
  };
  afterAll(async () => {
    for (const s of stores) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs at its time, once, then at the next; the first start ever does not count as a missed run', async () => {
    const clock = new ManualClock('2026-03-10T12:00:00Z');
    const schedules = new Schedules({ intake: nightly }, store(), clock);
    await schedules.start();
    expect(await schedules.due()).toEqual([]);
    clock.advance(14 * 3_600_000 - 1); // 01:59:59.999 UTC, before 02:00 London (GMT in March before the change)
    expect(await schedules.due()).toEqual([]);
    clock.advance(1);
    expect(await schedules.due()).toEqual(['intake']);
    expect(await schedules.due()).toEqual([]);
    expect(new Date(schedules.upcoming().intake as number).toISOString()).toBe('2026-03-12T02:00:00.000Z');
  });

  it('a run missed while the daemon was down happens once at start, however many were missed', async () => {
    const clock = new ManualClock('2026-03-10T12:00:00Z');
    const first = new Schedules({ reconcile: { cron: '0 6 * * *', time_zone: 'UTC' } }, store(), clock);
    await first.start();
    clock.advance(3 * 24 * 3_600_000); // down for three days: three 06:00 runs missed
    const again = new Schedules({ reconcile: { cron: '0 6 * * *', time_zone: 'UTC' } }, store(true), clock);
    await again.start();
    expect(await again.due()).toEqual(['reconcile']);
    expect(await again.due()).toEqual([]);
    expect(new Date(again.upcoming().reconcile as number).toISOString()).toBe('2026-03-14T06:00:00.000Z');
  });
});
