/**
 * Nothing paybatch writes goes through a link or leaves the workspace. Links
 * are planted at every path it writes (the folders, the result and summary
 * names, the failed/ report, the reports folder, the log, the database), each
 * pointing at a file or folder outside the workspace that paybatch runs as its
 * owner could overwrite; the targets must come out untouched, and files
 * paybatch writes are readable by their owner only.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import { runCli } from '../helpers/cli.js';
import { FAST_ENGINE, FAST_INTAKE, FAST_SANDBOX, template } from '../helpers/engine.js';

describe('links planted where paybatch writes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-links-'));
  const outside = join(dir, 'outside');
  const target = join(outside, 'precious.txt');
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ config: FAST_SANDBOX });
    mkdirSync(outside);
  });
  afterAll(async () => {
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh workspace with a GBR batch (and its completion marker) in the inbox; the precious file written anew. */
  function workspace(name: string, batch = 'templates/gbr-bank.csv'): { home: string; env: NodeJS.ProcessEnv; batchId: string } {
    const home = join(dir, name);
    for (const folder of ['inbox', 'outbox', 'processing', 'archive', 'failed']) mkdirSync(join(home, folder), { recursive: true });
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ intake: FAST_INTAKE, engine: FAST_ENGINE }));
    copyFileSync(template(batch), join(home, 'inbox', 'gbr.csv'));
    writeFileSync(join(home, 'inbox', 'gbr.csv.done'), '');
    writeFileSync(target, 'ORIGINAL', { mode: 0o600 });
    const sha = createHash('sha256').update(readFileSync(template(batch))).digest('hex');
    const batchId = `B${new Date().toISOString().slice(0, 10).replace(/-/g, '')}-${sha.slice(0, 8)}`;
    return { home, batchId, env: { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: sandbox.url, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET: sandbox.apiSecret } };
  }
  const untouched = (): void => {
    expect(readFileSync(target, 'utf8')).toBe('ORIGINAL');
    expect(readdirSync(outside)).toEqual(['precious.txt']);
  };

  it('the result and summary names planted as links: replaced by plain files, never followed; written 0600', async () => {
    const { home, env, batchId } = workspace('final-names');
    symlinkSync(target, join(home, 'outbox', `${batchId}.results.csv`));
    symlinkSync(target, join(home, 'outbox', `${batchId}.summary.json`));
    const result = await runCli(['run', '--wait', '5s'], { env });
    expect(result.code, result.stderr).toBe(0);
    untouched();
    for (const file of [`${batchId}.results.csv`, `${batchId}.summary.json`]) {
      const entry = lstatSync(join(home, 'outbox', file));
      expect(entry.isFile()).toBe(true);
      expect(entry.mode & 0o777).toBe(0o600);
    }
    expect(statSync(join(home, 'paybatch.log')).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, 'paybatch.db')).mode & 0o777).toBe(0o600);
    for (const folder of ['inbox', 'outbox', 'archive', 'failed']) expect(statSync(join(home, folder)).mode & 0o777).toBe(0o700);
  });

  it('the report of a refused file planted as a link in failed/: not followed', async () => {
    const { home, env } = workspace('failed-report', 'templates/gbr-bank.csv');
    writeFileSync(join(home, 'inbox', 'gbr.csv'), 'external_id,type\nX,bank\n');
    const run = await runCli(['run', '--wait', '3s'], { env });
    const [refused] = readdirSync(join(home, 'failed')).filter((f) => f.endsWith('--gbr.csv'));
    expect(refused, run.stderr).toBeDefined();
    // Again, with the next report's name planted: the claimed name is time-stamped, so plant every one the run could use.
    writeFileSync(join(home, 'inbox', 'gbr.csv'), 'external_id,type\nY,bank\n');
    writeFileSync(join(home, 'inbox', 'gbr.csv.done'), '');
    const at = Date.now();
    for (let ms = 0; ms < 8000; ms++) {
      const name = `${new Date(at + ms).toISOString().replace(/[:.]/g, '-')}--gbr.csv.report.txt`;
      symlinkSync(target, join(home, 'failed', name));
    }
    await runCli(['run', '--wait', '3s'], { env });
    untouched();
  });

  it.each([
    ['outbox', 'a folder'],
    ['failed', 'a folder'],
    ['paybatch.log', 'the log'],
    ['paybatch.db', 'the database'],
  ])('%s planted as a link (%s): the run is refused with exit 73 and one line, nothing written outside', async (path) => {
    const { home, env } = workspace(`planted-${path}`);
    rmSync(join(home, path), { recursive: true, force: true });
    symlinkSync(path === 'outbox' || path === 'failed' ? outside : target, join(home, path));
    const result = await runCli(['run', '--wait', '2s'], { env });
    expect(result.code, result.stderr).toBe(73);
    expect(result.stderr).toMatch(/is a symbolic link: refused/);
    expect(result.stderr).not.toMatch(/a bug, please report it|\n\s+at /);
    untouched();
  });

  it('the reports folder planted as a link: report is refused with exit 73', async () => {
    const { home, env, batchId } = workspace('reports-link');
    expect((await runCli(['run', '--wait', '5s'], { env })).code).toBe(0);
    symlinkSync(outside, join(home, 'outbox', 'reports'));
    const result = await runCli(['report', '--batch', batchId], { env });
    expect(result.code, result.stderr).toBe(73);
    expect(result.stderr).toMatch(/leads through a symbolic link/);
    untouched();
    expect(existsSync(join(outside, `reconciliation-${batchId}.summary.csv`))).toBe(false);
  });
});
