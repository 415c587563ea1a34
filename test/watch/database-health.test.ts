/**
 * The database under the daemon: deleted, replaced, truncated. The daemon
 * notices, takes no more work and says so on /healthz; a damaged database is
 * refused at start with what to do, and one found while `run` works stops it,
 * the workspace let go; `paybatch backup` makes an online copy that can be
 * restored.
 */
import { copyFileSync, existsSync, openSync, closeSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, truncateSync, unlinkSync, writeSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { DaemonContext } from '../helpers/daemon.js';
import { daemonContext, eventually } from '../helpers/daemon.js';
import { runCli } from '../helpers/cli.js';
import { FAST_ENGINE, FAST_INTAKE, template } from '../helpers/engine.js';

const health = async (ctx: DaemonContext): Promise<{ status: number; body: { status: string; reason?: string } }> => {
  const response = await fetch(ctx.started.healthUrl);
  return { status: response.status, body: (await response.json()) as { status: string; reason?: string } };
};

/** Whether this process watches `dir` for new files (Linux: an inotify watch on its inode, as the inbox watcher sets). */
function watching(dir: string): boolean {
  const inode = statSync(dir).ino.toString(16);
  return readdirSync('/proc/self/fd').some((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === 'anon_inode:inotify' && new RegExp(`^inotify wd:\\S+ ino:${inode} `, 'm').test(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
    } catch {
      return false;
    }
  });
}

/**
 * A file dropped into the inbox once the daemon has let go of it (its watch on the inbox ended: the event that no file
 * arriving later is seen), then looked at: still there, nothing sent.
 */
async function droppedFileStays(ctx: DaemonContext): Promise<void> {
  const inbox = ctx.workspace.folders.inbox;
  await eventually(() => !watching(inbox), 5_000, 'the daemon letting go of the inbox');
  copyFileSync(template('templates/gbr-bank.csv'), join(inbox, 'after.csv'));
  writeFileSync(join(inbox, 'after.csv.done'), '');
  expect(readdirSync(inbox).sort()).toEqual(['after.csv', 'after.csv.done']);
}

describe('the daemon\'s database taken from under it', () => {
  let ctx: DaemonContext;
  afterEach(async () => ctx.stop());

  it.each([
    ['deleted', (file: string) => unlinkSync(file), /the database file was deleted/],
    ['replaced', (file: string) => {
      copyFileSync(file, `${file}.other`);
      renameSync(`${file}.other`, file);
    }, /the database file was replaced by another file/],
    ['truncated', (file: string) => truncateSync(file, Math.floor(statSync(file).size / 2)), /the database file was truncated/],
  ])('%s: /healthz answers 503 with why, and no more files are taken', async (_what, harm, reason) => {
    ctx = await daemonContext();
    expect((await health(ctx)).status).toBe(200);
    expect(watching(ctx.workspace.folders.inbox)).toBe(true);
    harm(ctx.workspace.database);
    const sick = await eventually(async () => {
      const now = await health(ctx);
      return now.status === 503 ? now : null;
    }, 5_000, 'the daemon noticing');
    expect(sick.body).toMatchObject({ status: 'database', reason: expect.stringMatching(reason) });
    const said = await eventually(() => ctx.logs.find((l) => l.event === 'database_unhealthy'), 5_000, 'the daemon saying so');
    expect(said.fields).toMatchObject({ problem: expect.stringMatching(reason), what_to_do: expect.stringMatching(/paybatch backup/) });
    await droppedFileStays(ctx);
    expect([...ctx.sandbox.store.allTransactions()]).toEqual([]);
  });

  it('damage the check of the whole database found beside the work: /healthz answers 503, no more files are taken', async () => {
    ctx = await daemonContext();
    expect(watching(ctx.workspace.folders.inbox)).toBe(true);
    ctx.daemon.databaseDamaged('the database x.db is damaged (Tree 7 page 9: btreeInitPage() returns error code 11): stop paybatch');
    const sick = await eventually(async () => {
      const now = await health(ctx);
      return now.status === 503 ? now : null;
    }, 5_000, 'the daemon noticing');
    expect(sick.body).toMatchObject({ status: 'database', reason: expect.stringMatching(/Tree 7 page 9/) });
    await droppedFileStays(ctx);
  });
});

/** Damage in a table nothing at start reads: a padding table whose middle leaf says it is a page of an unknown kind. */
function damageOnlyTheCheckFinds(db: string): void {
  const padded = new Database(db);
  padded.exec('CREATE TABLE padding (n INTEGER PRIMARY KEY, filler BLOB)');
  const fill = padded.prepare('INSERT INTO padding (filler) VALUES (zeroblob(600))');
  for (let i = 0; i < 2000; i++) fill.run();
  const pages = padded.prepare("SELECT pageno FROM dbstat WHERE name = 'padding' AND pagetype = 'leaf' ORDER BY pageno").pluck().all() as number[];
  const pageSize = padded.pragma('page_size', { simple: true }) as number;
  padded.pragma('wal_checkpoint(TRUNCATE)');
  padded.close();
  const leaf = pages[Math.floor(pages.length / 2)] as number;
  const fd = openSync(db, 'r+');
  writeSync(fd, Buffer.from([0x77, 0x77, 0x77, 0x77]), 0, 4, (leaf - 1) * pageSize);
  closeSync(fd);
}

describe('a damaged database at start, and backups', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-db-health-'));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // Seven runs of the binary: more than the default 20 s on a machine kept busy by other work.
  it('refuses a damaged database with exit 65 and what to do; a backup restored works', { timeout: 60_000 }, async () => {
    const home = join(dir, 'ws');
    const env = { PAYBATCH_HOME: home };
    expect((await runCli(['run', '--wait', '1s'], { env })).code).toBe(0);
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ intake: FAST_INTAKE, engine: FAST_ENGINE }));
    copyFileSync(template('templates/gbr-bank.csv'), join(home, 'inbox', 'gbr.csv'));
    writeFileSync(join(home, 'inbox', 'gbr.csv.done'), '');
    expect((await runCli(['run', '--wait', '5s'], { env })).code).toBe(0);

    const backup = join(dir, 'paybatch-backup.db');
    const made = await runCli(['backup', backup], { env });
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/backup of .*paybatch\.db written to .*paybatch-backup\.db \(\d+ bytes\)/);
    expect(statSync(backup).mode & 0o777).toBe(0o600);
    expect((await runCli(['backup', backup], { env })).stderr).toMatch(/already exists: give a new file name/);

    // Damage: bytes overwritten in the middle of the database.
    const db = join(home, 'paybatch.db');
    const fd = openSync(db, 'r+');
    writeSync(fd, Buffer.alloc(4096, 0xab), 0, 4096, 4096);
    closeSync(fd);
    const refused = await runCli(['run', '--wait', '1s'], { env });
    expect(refused.code, refused.stderr).toBe(65);
    expect(refused.stderr).toMatch(/the database .*paybatch\.db is damaged \(.*\): stop paybatch, move paybatch\.db .* aside, and restore the last backup made with `paybatch backup`/);
    expect(refused.stderr).not.toMatch(/a bug, please report it|\n\s+at /);

    // Damage only the check of every page finds (a table nothing at start reads): run stops with 65 all the same, the
    // check running beside its work and answering before it may end.
    copyFileSync(backup, db);
    for (const suffix of ['-wal', '-shm']) if (existsSync(`${db}${suffix}`)) unlinkSync(`${db}${suffix}`);
    damageOnlyTheCheckFinds(db);
    const quiet = await runCli(['run', '--wait', '1s'], { env });
    expect(quiet.code, quiet.stderr).toBe(65);
    expect(quiet.stderr).toMatch(/the database .*paybatch\.db is damaged \(.+\): stop paybatch/);
    expect(quiet.stderr).not.toMatch(/a bug, please report it|\n\s+at /);

    // Restore as the README says: move the damaged files aside, copy the backup in.
    for (const suffix of ['', '-wal', '-shm']) if (existsSync(`${db}${suffix}`)) renameSync(`${db}${suffix}`, join(dir, `damaged.db${suffix}`));
    copyFileSync(backup, db);
    const status = await runCli(['status', '--json'], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).batches[0]).toMatchObject({ file: 'gbr.csv', status: 'settled' });
  });
});

describe('damage found beside the work while run is mid-call', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('run stops with exit 65 and the one line, having released the workspace lease', async () => {
    dir = mkdtempSync(join(tmpdir(), 'paybatch-db-mid-work-'));
    const home = join(dir, 'ws');
    expect((await runCli(['run', '--wait', '1s'], { env: { PAYBATCH_HOME: home } })).code).toBe(0);
    const db = join(home, 'paybatch.db');
    damageOnlyTheCheckFinds(db);
    // A payout service that takes every call and never answers: the run cannot end before the check has answered.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ intake: FAST_INTAKE, engine: FAST_ENGINE, service: { timeout_ms: 60_000 } }));
      copyFileSync(template('templates/gbr-bank.csv'), join(home, 'inbox', 'gbr.csv'));
      writeFileSync(join(home, 'inbox', 'gbr.csv.done'), '');
      const baseUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`;
      const stopped = await runCli(['run', '--wait', '5m'], { env: { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: baseUrl, PAYBATCH_API_KEY: 'key', PAYBATCH_API_SECRET: 'secret' } });
      expect(stopped.code, stopped.stderr).toBe(65);
      // The stop's line is the last said.
      expect(stopped.stderr).toMatch(/\npaybatch: the database .*paybatch\.db is damaged \(.+\): stop paybatch[^\n]*\n$/);
      expect(stopped.stderr).not.toMatch(/a bug, please report it|\n\s+at /);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
    // Released before the exit, not left to be taken over from a dead process.
    const after = new Database(db);
    try {
      expect(after.prepare('SELECT holder, pid FROM workspace_lease').all()).toEqual([]);
    } finally {
      after.close();
    }
  });
});
