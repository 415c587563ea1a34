/**
 * The README's own commands, given a folder that does not exist yet: paybatch
 * makes the private folder the person obviously meant, and a path it cannot
 * use is one line with its own exit code, never "a bug".
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { runCli } from '../helpers/cli.js';

describe('commands given a folder that is not there', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-missing-folders-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keys generate makes the key folder, private (0700)', async () => {
    const keys = join(dir, 'new', 'keys');
    const result = await runCli(['keys', 'generate', 'alice', '--dir', keys, '--home', join(dir, 'home')]);
    expect(result.code, result.stderr).toBe(0);
    expect(statSync(keys).mode & 0o777).toBe(0o700);
    expect(statSync(join(keys, 'alice.key')).mode & 0o777).toBe(0o600);
  });

  it('backup makes the folder the copy goes to, private (0700)', async () => {
    const home = join(dir, 'workspace');
    mkdirSync(join(home, 'inbox'), { recursive: true });
    // A workspace's database, so there is something to back up.
    await (SqliteStore.open(join(home, 'paybatch.db'))).close();
    const target = join(dir, 'backups', 'nightly', 'state.db');
    const result = await runCli(['backup', target, '--home', home]);
    expect(result.code, result.stderr).toBe(0);
    expect(statSync(join(dir, 'backups', 'nightly')).mode & 0o777).toBe(0o700);
    expect(statSync(target).size).toBeGreaterThan(0);
  });

  it('a path that cannot be used is one line and exit 73, not a bug', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'not a folder');
    const result = await runCli(['keys', 'generate', 'bob', '--dir', join(file, 'keys'), '--home', join(dir, 'home')]);
    expect(result.stderr).not.toMatch(/a bug, please report it|\n\s+at /);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(join(file, 'keys'));
    expect(result.code).toBe(73);
  });
});
