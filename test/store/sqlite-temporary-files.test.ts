/**
 * SQLite's own temporary files go beside the database, not in the system's
 * temporary folder (a full one stopped `run` with a disk error): the CLI sets
 * the folder once as a command starts (cli/process-tuning.ts), the store does
 * not. Checked in a process of its own, as SQLite reads the folder once per
 * process: a temporary table spills to a file, whose path the process's open
 * descriptors show.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const database = fileURLToPath(new URL('../../dist/src/store/sqlite/database.js', import.meta.url));
const tuning = fileURLToPath(new URL('../../dist/src/cli/process-tuning.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'paybatch-sqlite-temp-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const script = `
import { readdirSync, readlinkSync } from 'node:fs';
const { openDatabase } = await import(${JSON.stringify(database)});
const { keepSqliteTemporaryFilesBeside } = await import(${JSON.stringify(tuning)});
// As a command does before it opens the store; 'store' alone: as a module that opens a database on its own.
if (process.argv[2] === 'cli') keepSqliteTemporaryFilesBeside({}, { database: process.argv[1] });
const db = openDatabase(process.argv[1]);
db.exec("CREATE TEMP TABLE t(x); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300000) INSERT INTO t SELECT randomblob(100) FROM c;");
const open = readdirSync('/proc/self/fd').map((fd) => { try { return readlinkSync('/proc/self/fd/' + fd); } catch { return ''; } });
console.log(JSON.stringify(open.filter((path) => path.includes('etilqs_'))));
`;

/** The paths of SQLite's temporary files while a temporary table spills, in a process opening a database in `workspace`. */
function temporaryFiles(name: string, how: 'cli' | 'store'): { workspace: string; temporary: string; files: string[] } {
  const workspace = join(dir, name, 'workspace');
  const temporary = join(dir, name, 'temporary');
  mkdirSync(workspace, { recursive: true });
  mkdirSync(temporary, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: temporary };
  delete env.SQLITE_TMPDIR;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script, join(workspace, 'paybatch.db'), how], { env, encoding: 'utf8' });
  expect(child.status, child.stderr).toBe(0);
  const files = JSON.parse(child.stdout) as string[];
  expect(files.length).toBeGreaterThan(0);
  return { workspace, temporary, files };
}

describe.skipIf(process.platform !== 'linux')('SQLite\'s temporary files', () => {
  it('are made in the database\'s folder, whatever TMPDIR says, once the CLI has set the folder', () => {
    const { workspace, files } = temporaryFiles('cli', 'cli');
    for (const file of files) expect(file).toMatch(new RegExp(`^${workspace}/etilqs_\\w+ \\(deleted\\)$`));
  });

  it('are left where SQLite puts them by a store opened alone: the process-wide setting is the CLI\'s, not the store\'s', () => {
    const { temporary, files } = temporaryFiles('store', 'store');
    for (const file of files) expect(file).toMatch(new RegExp(`^${temporary}/etilqs_\\w+ \\(deleted\\)$`));
  });
});
