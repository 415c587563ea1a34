import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openWorkspace, WORKSPACE_FOLDERS } from '../../src/workspace/workspace.js';

describe('the workspace folder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-ws-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('creates inbox, processing, outbox, archive and failed, for its owner only, and names the database', () => {
    const workspace = openWorkspace(join(dir, 'data'));
    for (const name of WORKSPACE_FOLDERS) {
      expect(workspace.folders[name]).toBe(join(dir, 'data', name));
      expect((statSync(workspace.folders[name]).mode & 0o777).toString(8)).toBe('700');
    }
    expect(workspace.database).toBe(join(dir, 'data', 'paybatch.db'));
    expect(openWorkspace(join(dir, 'data')).home).toBe(workspace.home);
  });
});

describe('the workspace lease', () => {
  it('refuses a second holder while the first lives; takes over from a dead process or a silent host; the loser finds out', async () => {
    const { holdWorkspace, STALE_AFTER_MS } = await import('../../src/engine/workspace-lease.js');
    const { SqliteStore } = await import('../../src/store/sqlite/sqlite-store.js');
    const { ManualClock } = await import('../../src/clock.js');
    const home = mkdtempSync(join(tmpdir(), 'paybatch-lease-'));
    const store = SqliteStore.open(join(home, 'paybatch.db'));
    const clock = new ManualClock('2026-11-23T12:00:00.000Z');
    try {
      const first = await holdWorkspace(store, 'watch', home, clock);
      await expect(holdWorkspace(store, 'run', home, clock)).rejects.toThrow(/another paybatch \(watch, process \d+, since 2026-11-23T12:00:00\.000Z\) is working in/);
      await first.release();
      const second = await holdWorkspace(store, 'run', home, clock);
      await second.release();

      // A holder whose process is gone (killed with SIGKILL) on this host: taken over at once.
      const dead = { token: 'dead', holder: 'watch', pid: 999_999_999, host: (await import('node:os')).hostname(), acquired_at: clock.now(), renewed_at: clock.now() };
      expect(await store.acquireLease(dead, () => true, STALE_AFTER_MS)).toBeNull();
      const third = await holdWorkspace(store, 'run', home, clock);
      expect(await store.renewLease('dead', clock.now())).toBe(false);
      await third.release();

      // A holder on another host: refused while it renews; taken over once silent for a minute.
      const elsewhere = { token: 'far', holder: 'watch', pid: 42, host: 'other-machine', acquired_at: clock.now(), renewed_at: clock.now() };
      expect(await store.acquireLease(elsewhere, () => true, STALE_AFTER_MS)).toBeNull();
      await expect(holdWorkspace(store, 'run', home, clock)).rejects.toThrow(/process 42 on other-machine/);
      clock.advance(STALE_AFTER_MS);
      const fourth = await holdWorkspace(store, 'run', home, clock);
      expect(await store.renewLease('far', clock.now())).toBe(false);
      await fourth.release();
    } finally {
      await store.close();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
