/**
 * Operational failures, as a person or cron sees them: each has its own exit
 * code and one clear line, never "a bug, please report it". And a run whose
 * rows need a person says so in its exit code.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, copyFileSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import { runCli } from '../helpers/cli.js';
import type { Finished } from '../helpers/cli.js';
import { FAST_ENGINE, FAST_INTAKE, FAST_SANDBOX, template } from '../helpers/engine.js';
import type { LyingService } from '../helpers/lying-service.js';
import { PATHS, answer, lyingService, otherTransaction, rule } from '../helpers/lying-service.js';

const oneClearLine = (result: Finished): void => {
  expect(result.stderr).not.toMatch(/a bug, please report it|\n\s+at /);
};

describe('exit codes and one clear line for operational failures', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-exit-codes-'));
  let sandbox: RunningSandbox;
  let liar: LyingService;
  beforeAll(async () => {
    sandbox = await startSandbox({ config: FAST_SANDBOX });
    liar = await lyingService(sandbox);
  });
  afterAll(async () => {
    await liar.close();
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh workspace with the fast engine and a GBR batch in its inbox. */
  function workspace(name: string, baseUrl: string): NodeJS.ProcessEnv {
    const home = join(dir, name);
    mkdirSync(join(home, 'inbox'), { recursive: true });
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ intake: FAST_INTAKE, engine: FAST_ENGINE, service: { retry: { base_ms: 10, cap_ms: 50, attempts: 2 }, timeout_ms: 2000 } }));
    copyFileSync(template('templates/gbr-bank.csv'), join(home, 'inbox', 'gbr.csv'));
    return { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: baseUrl, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET: sandbox.apiSecret };
  }

  it('exits 3 when an answer did not match its request: a person must look', async () => {
    liar.lie(rule('POST', PATHS.create, otherTransaction(), 1));
    const result = await runCli(['run', '--wait', '5s'], { env: workspace('mismatch', liar.url) });
    expect(result.code, result.stderr).toBe(3);
    expect(result.stdout).toMatch(/answer_mismatch 1.*\n.*refused or held by paybatch: answer_mismatch 1\n(?: {2}paid out .*\n)? {2}1 rows need a person/);
    // The lie answers the first create to arrive: the rows' creates are in flight together, so either row's.
    expect(result.stderr).toMatch(/paybatch: answer mismatch: batch B\S+, line ([23]), external_id (GBR-2026-000[12]), .*asked_in create, detail the create answer did not match the request: external_id asked \2, answered FOREIGN-/);
    oneClearLine(result);
  });

  it('exits 69 when the service cannot be reached, and nothing is sent', async () => {
    const result = await runCli(['run', '--wait', '2s'], { env: workspace('unreachable', 'http://127.0.0.1:9/v1') });
    expect(result.code, result.stderr).toBe(69);
    expect(result.stderr).toMatch(/paybatch: the payout service did not answer \(corridors of GBR: no answer \(connect ECONNREFUSED 127\.0\.0\.1:9\)\); nothing of batch B\S+ was sent, and the next run sends it\n$/);
    oneClearLine(result);
  });

  it('exits 74 with one line when the disk is full (a small file system, filled)', async () => {
    // A real full disk: a 4 MiB tmpfs, the workspace on it, filled to the last byte before the run.
    const disk = join(dir, 'small-disk');
    mkdirSync(disk);
    if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', disk]).status !== 0) {
      if (process.env.CI === 'true') throw new Error('the disk-full test mounts a small tmpfs: run the tests as root');
      console.log('exit-codes: the disk-full test needs to mount a tmpfs (root); not run here');
      return;
    }
    try {
      const home = join(disk, 'ws');
      const env = { ...workspace('unused', sandbox.url), PAYBATCH_HOME: home };
      mkdirSync(join(home, 'inbox'), { recursive: true });
      writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ intake: FAST_INTAKE, engine: FAST_ENGINE }));
      expect((await runCli(['run', '--wait', '1s'], { env })).code).toBe(0);
      copyFileSync(template('templates/gbr-bank.csv'), join(home, 'inbox', 'gbr.csv'));
      writeFileSync(join(home, 'inbox', 'gbr.csv.done'), '');
      const filler = openSync(join(disk, 'filler'), 'w');
      try {
        for (const chunk = Buffer.alloc(64 * 1024); ;) writeSync(filler, chunk);
      } catch (error) {
        expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
      } finally {
        closeSync(filler);
      }
      const result = await runCli(['run', '--wait', '2s'], { env });
      expect(result.code, result.stderr).toBe(74);
      // Which write meets the full disk first (the log, SQLite's WAL or shared memory, a result file) varies: each says so in one line.
      expect(result.stderr).toMatch(/paybatch: the disk (is full|refused a write \(\w+\)): free space \(or fix the disk\) and run again; nothing is lost, the next run carries on from the database\n$/);
      oneClearLine(result);
    } finally {
      spawnSync('umount', ['-l', disk]);
    }
  });

  it('a base_url without its version prefix (every path 404) exits 78 saying so; a corridor read refused (400) or redirected exits 69', async () => {
    const noPrefix = await runCli(['run', '--wait', '2s'], { env: workspace('no-prefix', sandbox.url.replace(/\/v1$/, '')) });
    expect(noPrefix.code, noPrefix.stderr).toBe(78);
    expect(noPrefix.stderr).toMatch(/the payout service has no GET \/corridors at http:\/\/127\.0\.0\.1:\d+: check service\.base_url \(with its version prefix, such as \/v1\)/);
    oneClearLine(noPrefix);
    liar.clear();
    liar.lie(rule('GET', /^\/corridors\//, answer(400, { errors: ['bad request'] })));
    const refused = await runCli(['run', '--wait', '2s'], { env: workspace('corridor-400', liar.url) });
    expect(refused.code, refused.stderr).toBe(69);
    expect(refused.stderr).toMatch(/the payout service refused to list corridors \(corridors of GBR was refused \(400\): bad request\)/);
    oneClearLine(refused);
    liar.clear();
    liar.lie(rule('GET', /^\/corridors\//, answer(302, { errors: ['moved'] }, { location: 'http://elsewhere.example/v1/corridors/GBR' })));
    const moved = await runCli(['run', '--wait', '2s'], { env: workspace('corridor-302', liar.url) });
    expect(moved.code, moved.stderr).toBe(69);
    expect(moved.stderr).toMatch(/unexpected redirect to http:\/\/elsewhere\.example\/v1\/corridors\/GBR, not followed/);
    oneClearLine(moved);
  });

  it('exits 65 when the database was written by a newer paybatch, and changes nothing', async () => {
    const env = workspace('newer', sandbox.url);
    expect((await runCli(['status'], { env })).code).toBe(1);
    const db = new Database(join(env.PAYBATCH_HOME as string, 'paybatch.db'));
    db.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL); INSERT INTO schema_migrations VALUES (99, 'from the future', '2030-01-01')");
    db.close();
    const result = await runCli(['run', '--wait', '1s'], { env });
    expect(result.code, result.stderr).toBe(65);
    expect(result.stderr).toMatch(/paybatch: the database is at schema version 99, newer than this paybatch knows \(\d+\): it was written by a newer paybatch/);
    oneClearLine(result);
  });

  it('exits 64 for a --date that is not a date, and shows durations in --help as they are typed', async () => {
    const env = workspace('usage', sandbox.url);
    const report = await runCli(['report', '--date', 'yesterday'], { env });
    expect(report.code).toBe(64);
    expect(report.stderr).toMatch(/--date must be a calendar date as YYYY-MM-DD, not "yesterday"/);
    expect((await runCli(['run', '--help'])).stdout).toMatch(/--wait <duration> .*\(default: 5m\)/s);
    expect((await runCli(['cancel', '--help'])).stdout).toMatch(/--wait <duration> .*\(default: 2m\)/s);
    expect((await runCli(['run', '--help'])).stdout).not.toMatch(/300000/);
  });

  it('cancel: a row named but not cancellable is listed with why, and nothing cancelled exits 1', async () => {
    const env = workspace('cancel', sandbox.url);
    const run = await runCli(['run', '--wait', '5s'], { env });
    expect(run.code, run.stderr).toBe(0);
    const batch = /(B\d{8}-[0-9a-f]{8}) \(gbr\.csv\)/.exec(run.stdout)?.[1] as string;
    const result = await runCli(['cancel', '--batch', batch, '--external-id', 'GBR-2026-0001,NOPE-1', '--wait', '1s'], { env });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^ {5}2 {2}GBR-2026-0001 {2}paid -> paid {2}not cancelled: already final \(paid\)$/m);
    expect(result.stdout).toMatch(/^ {5}- {2}NOPE-1 {2}\? -> \? {2}not cancelled: no row of batch B\S+ has this external_id$/m);
  });
});
