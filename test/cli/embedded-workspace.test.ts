/**
 * A newcomer's workspace with no service configured: `run`, then `report` and
 * `status` as separate processes of the built binary, all on the workspace's
 * embedded sandbox (its state in HOME/sandbox/sandbox.db), with its default
 * timings and paybatch's default options. Needs `npm run build`.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../chaos/free-port.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { BIN, runCli } from '../helpers/cli.js';
import { eventually } from '../helpers/daemon.js';
import { template } from '../helpers/engine.js';

/** No service from the environment: the embedded default (an empty value is no value). */
const NO_SERVICE = { PAYBATCH_BASE_URL: '', PAYBATCH_API_KEY: '', PAYBATCH_API_SECRET: '', PAYBATCH_API_SECRET_FILE: '', PAYBATCH_DATABASE_URL: '' };

/** Drops a file whole (its completion marker beside it), as the demo does. */
function drop(home: string, source: string, name: string): void {
  copyFileSync(source, join(home, 'inbox', name));
  writeFileSync(join(home, 'inbox', `${name}.done`), '');
}

// Each test has its own workspace, so its own embedded sandbox and its own processes: they run at once. Their time is
// spent waiting on the sandbox's default timings (payouts in 1 to 4 s, read every 2 s) and on --wait, not on a core.
describe.concurrent('the embedded sandbox is part of the workspace', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-embedded-ws-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const today = new Date().toISOString().slice(0, 10);

  it('a first run with default options pays every row; report and status, later processes, find the same transactions', async () => {
    const home = join(dir, 'newcomer');
    const env = { ...NO_SERVICE, PAYBATCH_HOME: home };
    // The workspace's folders, as a first command makes them.
    expect((await runCli(['run', '--wait', '1s'], { env })).code).toBe(0);
    drop(home, template('templates/eur-iban-bank.csv'), 'eur.csv');
    const started = Date.now();
    const run = await runCli(['run'], { env });
    const took = Date.now() - started;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/\(eur\.csv\): 3 rows: paid 3; all final/);
    // Said once, at start: nothing real is paid, and where the embedded service keeps its state.
    const database = join(home, 'sandbox', 'sandbox.db');
    expect(run.stderr.split('nothing real is paid').length - 1).toBe(1);
    expect(run.stderr).toContain(`embedded sandbox http://127.0.0.1:`);
    expect(run.stderr).toContain(`its state in ${database}`);
    expect(run.stderr).toMatch(/each payout is read every 2s for its first 2m, then every 30s \(the embedded sandbox's polling/);
    // The workspace's sandbox secret: kept in the workspace, its owner's alone, never printed or logged.
    const credentials = join(home, 'sandbox', 'credentials.json');
    expect(statSync(credentials).mode & 0o777).toBe(0o600);
    expect(statSync(database).mode & 0o777).toBe(0o600);
    const { api_secret: secret } = JSON.parse(readFileSync(credentials, 'utf8')) as { api_secret: string };
    expect(run.stderr).not.toContain(secret);
    expect(readFileSync(join(home, 'paybatch.log'), 'utf8')).not.toContain(secret);
    // Well within the default --wait of 5 minutes (the sandbox pays in 1 to 4 seconds, read every 2).
    expect(took).toBeLessThan(120_000);

    const report = await runCli(['report', '--date', today], { env });
    expect(report.stdout, report.stderr).toMatch(/\b0 differences\b/);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).not.toMatch(/unexplained|not found/);

    const status = await runCli(['status'], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/eur\.csv {2}settled/);
    expect(status.stdout).toContain('3 rows: paid 3');
    expect(status.stdout).not.toMatch(/in flight|next reads/);

    // The next run finds the same transactions (no 404) and has nothing to do.
    const again = await runCli(['run', '--wait', '5s'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/nothing to do/);
    // A whole 404, not the digits inside a port (the sandbox's URL is on the first line: once 127.0.0.1:40427).
    expect(again.stderr).not.toMatch(/\b404\b|not found/);
    // The same key and secret for every command of the workspace: a webhook signed by one process verifies in another.
    expect(JSON.parse(readFileSync(credentials, 'utf8'))).toMatchObject({ api_secret: secret });
  }, 240_000);

  it('watch running while status and report run: the three share the sandbox; watch hears its payouts by signed webhook', async () => {
    const home = join(dir, 'watching');
    const env = { ...NO_SERVICE, PAYBATCH_HOME: home };
    openWorkspace(home);
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ watch: { stable_ms: 200, results_every_ms: 500, listen: { port: await freePort() } } }));
    const child = spawn(process.execPath, [BIN, 'watch'], { env: { ...process.env, ...env } });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.resume();
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      await eventually(() => /webhooks received at/.test(stderr), 30_000, `watch started: ${stderr}`);
      drop(home, template('templates/eur-iban-bank.csv'), 'eur.csv');
      await eventually(() => readdirSync(join(home, 'archive')).length > 0, 60_000, `the batch settled: ${stderr}`);
      const status = await runCli(['status', '--json'], { env });
      expect(status.code, status.stderr).toBe(0);
      const [batch] = JSON.parse(status.stdout).batches;
      expect(batch).toMatchObject({ status: 'settled', rows: 3, by_state: { paid: 3 }, unsettled: 0 });
      expect(batch.learned.webhook).toBeGreaterThan(0);
      const report = await runCli(['report', '--date', today], { env });
      expect(report.stdout, report.stderr).toMatch(/service ledger compared; 0 differences/);
      expect(report.code, report.stderr).toBe(0);
      expect(stderr).not.toMatch(/held_elsewhere [1-9]|SQLITE_BUSY|database is locked/);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited, stderr).toBe(0);
  }, 180_000);

  it('run or watch taking the workspace drops the webhooks an earlier watch left in its sandbox (their receiver is gone)', async () => {
    const home = join(dir, 'left-webhooks');
    const env = { ...NO_SERVICE, PAYBATCH_HOME: home };
    const sync = await runCli(['webhooks', 'sync', '--url', 'http://127.0.0.1:9/webhooks'], { env });
    expect(sync.code, sync.stderr).toBe(0);
    expect((await runCli(['webhooks', 'list'], { env })).stdout).toContain('http://127.0.0.1:9/webhooks');
    expect((await runCli(['run', '--wait', '1s'], { env })).code).toBe(0);
    const list = await runCli(['webhooks', 'list'], { env });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).not.toContain('http://127.0.0.1:9/webhooks');
  }, 120_000);

  it('the demo file: rows the sandbox holds (stuck, manual, error, exception) are reported as such by run, status and report alike', async () => {
    const home = join(dir, 'demo-file');
    const env = { ...NO_SERVICE, PAYBATCH_HOME: home };
    expect((await runCli(['run', '--wait', '1s'], { env })).code).toBe(0);
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ batch: { invalid_rows: 'skip_invalid' } }));
    drop(home, template('demo-batch.csv'), 'demo-batch.csv');
    // The rows the sandbox holds never end: the run follows them until --wait, long enough for an error then paid (up to 11 s).
    const run = await runCli(['run', '--wait', '30s'], { env });
    expect(run.code, run.stderr).toBe(0);
    const held = 'error 1, exception 1, invalid 2, manual 1, paid 12, stuck 1';
    expect(run.stdout).toMatch(new RegExp(`\\(demo-batch\\.csv\\): 18 rows: ${held}; 4 rows in flight at the service, next read at \\d\\d:\\d\\d:\\d\\d\\n`));

    const status = await runCli(['status'], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`18 rows: ${held}`);
    expect(status.stdout).toMatch(/\n {2}4 rows in flight at the service, next read at /);
    for (const state of ['manual', 'stuck', 'error', 'exception']) expect(status.stdout).toMatch(new RegExp(`line \\d+ +DEMO-\\d+ +${state}`));

    const report = await runCli(['report', '--date', today], { env });
    expect(report.stdout, report.stderr).toMatch(/\b0 differences\b/);
    // Its exit code is left to the report's own verdict: rows still in flight make it incomplete.
    expect(report.stdout).toMatch(/exceptions: 4\b/);
    expect(report.stdout).toMatch(/4 unsettled transactions read from the service; service ledger compared; 0 differences/);
    // Each row the sandbox holds is an exception in the state status gave it.
    const exceptions = readFileSync(join(home, 'outbox', 'reports', `reconciliation-${today}.exceptions.csv`), 'utf8');
    for (const state of ['manual', 'stuck', 'error', 'exception']) {
      const [line] = new RegExp(`line \\d+ +(DEMO-\\d+) +${state}`).exec(status.stdout)?.slice(1) ?? [];
      expect(exceptions.split('\n').some((l) => l.includes(line as string) && l.includes(state)), `${state} ${line}\n${exceptions}`).toBe(true);
    }
  }, 240_000);
});
