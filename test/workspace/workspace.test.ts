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

describe('the workspace lock', () => {
  it('refuses a second holder while the first lives, and takes over a lock left by a dead process', async () => {
    const { lockWorkspace } = await import('../../src/workspace/lock.js');
    const { writeFileSync, existsSync } = await import('node:fs');
    const home = mkdtempSync(join(tmpdir(), 'paybatch-lock-'));
    try {
      const unlock = lockWorkspace(home);
      expect(() => lockWorkspace(home)).toThrow(/another paybatch \(process \d+\) is working/);
      unlock();
      expect(existsSync(join(home, 'paybatch.lock'))).toBe(false);
      writeFileSync(join(home, 'paybatch.lock'), '999999999'); // no such process
      const again = lockWorkspace(home);
      again();
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
