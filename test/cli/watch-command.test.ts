import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import { freePort } from '../../chaos/free-port.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { validBatchLines } from '../helpers/batch-lines.js';
import { BIN, runCli } from '../helpers/cli.js';
import { eventually } from '../helpers/daemon.js';
import { FAST_ENGINE, FAST_SANDBOX, debitsPerTransaction, template } from '../helpers/engine.js';
import { operator } from '../helpers/sandbox.js';

interface Watching {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startWatch(env: NodeJS.ProcessEnv): Promise<Watching> {
  const child = spawn(process.execPath, [BIN, 'watch'], { env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.resume();
  let ended = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => {
    ended = true;
    resolve({ code, signal });
  }));
  return eventually(() => {
    if (ended) throw new Error(`watch ended before it started: ${stderr}`);
    return /webhooks received at/.test(stderr);
  }, 15_000, 'watch started').then(() => ({ child, stderr: () => stderr, exited }));
}

/** Enough that SIGTERM, sent once 40 are created, lands mid-batch: the stop finishes only the calls already in flight (4). */
const ROWS = 150;

describe('paybatch watch, as a process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-watch-cli-'));
  const home = join(dir, 'ws');
  let sandbox: RunningSandbox;
  let env: NodeJS.ProcessEnv;
  let port: number;

  beforeAll(async () => {
    // Payouts take a while, so that SIGTERM lands with rows created, funded and in flight.
    sandbox = await startSandbox({ config: { ...FAST_SANDBOX, payout: { ...FAST_SANDBOX.payout, delay_ms: [200, 1500] } } });
    port = await freePort();
    openWorkspace(home);
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({
      engine: { ...FAST_ENGINE, concurrency: 4 },
      watch: { stable_ms: 200, results_every_ms: 500, listen: { port } },
    }));
    env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: sandbox.url, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET: sandbox.apiSecret };
  });
  afterAll(async () => {
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops on SIGTERM within 10 seconds in the middle of a batch; a restart finishes it, losing nothing and paying nothing twice', { timeout: 90_000 }, async () => {
    const created = (): number => [...sandbox.store.allTransactions()].length;
    const { header, rows } = await validBatchLines(dir, ROWS);
    writeFileSync(join(home, 'inbox', 'big.csv'), `${header}\n${rows.join('\n')}\n`);
    const first = await startWatch(env);
    await eventually(() => created() >= 40, 20_000, 'forty rows created');
    const stoppedAt = Date.now();
    first.child.kill('SIGTERM');
    const exit = await first.exited;
    expect(exit.code, first.stderr()).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
    expect(first.stderr()).toMatch(/SIGTERM: stopping[\s\S]*stopped/);
    const createdBeforeStop = created();
    expect(createdBeforeStop).toBeLessThan(ROWS);

    const second = await startWatch(env);
    const resultsFile = (): string | undefined => readdirSync(join(home, 'outbox')).find((f) => f.endsWith('.results.csv'));
    const states = await eventually(() => {
      const file = resultsFile();
      if (!file || readdirSync(join(home, 'archive')).length === 0) return null;
      return (parse(readFileSync(join(home, 'outbox', file)), { columns: true }) as Record<string, string>[]).map((r) => r.state);
    }, 60_000, 'the batch settled after the restart');
    second.child.kill('SIGINT');
    expect((await second.exited).code, second.stderr()).toBe(0);

    expect(states).toHaveLength(ROWS);
    expect(new Set(states)).toEqual(new Set(['paid']));
    const perExternalId = new Map<string, number>();
    for (const tx of sandbox.store.allTransactions()) perExternalId.set(tx.external_id, (perExternalId.get(tx.external_id) ?? 0) + 1);
    expect(perExternalId.size).toBe(ROWS);
    expect([...perExternalId.values()].every((n) => n === 1)).toBe(true);
    const debits = debitsPerTransaction(sandbox);
    expect(debits.size).toBe(ROWS);
    expect([...debits.values()].every((n) => n === 1)).toBe(true);

    const listed = await runCli(['webhooks', 'list'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.trim().split('\n')).toHaveLength(21);
    expect(listed.stdout).toContain(`http://127.0.0.1:${port}/webhooks`);
    const status = await runCli(['status', '--json'], { env });
    const [batch] = JSON.parse(status.stdout).batches;
    expect(batch).toMatchObject({ status: 'settled', rows: ROWS, by_state: { paid: ROWS }, unsettled: 0 });
    expect(batch.learned.webhook + batch.learned.polling).toBeGreaterThan(0);
    const log = readFileSync(join(home, 'paybatch.log'), 'utf8');
    expect(log).not.toContain(sandbox.apiSecret);
  });

  it('webhooks sync reports event types held by another address, and takes them over with --replace', async () => {
    const other = { ...env, PAYBATCH_HOME: join(dir, 'other') };
    openWorkspace(join(dir, 'other'));
    const held = await runCli(['webhooks', 'sync', '--url', 'http://127.0.0.1:9/elsewhere'], { env: other });
    expect(held.code, held.stderr).toBe(0);
    expect(held.stdout).toMatch(/0 registered, 0 replaced, 0 already in place, 21 held by another address/);
    expect(held.stdout).toMatch(/transaction\.paid is registered for http:\/\/127\.0\.0\.1:\d+\/webhooks: not changed/);
    const replaced = await runCli(['webhooks', 'sync', '--url', 'http://127.0.0.1:9/elsewhere', '--replace'], { env: other });
    expect(replaced.stdout).toMatch(/0 registered, 21 replaced/);
    const back = await runCli(['webhooks', 'sync', '--url', `http://127.0.0.1:${port}/webhooks`, '--replace'], { env: other });
    expect(back.stdout).toMatch(/21 replaced/);
  });

  it('holds the workspace for its life: run beside it is refused, whatever is done to a lock file', { timeout: 30_000 }, async () => {
    const watching = await startWatch(env);
    try {
      const refused = await runCli(['run', '--wait', '1s'], { env });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(new RegExp(`another paybatch \\(watch, process ${watching.child.pid}, since .*\\) is working in`));
      // The lease lives in the database: an emptied, then deleted lock file changes nothing.
      writeFileSync(join(home, 'paybatch.lock'), '');
      expect((await runCli(['run', '--wait', '1s'], { env })).code).toBe(1);
      rmSync(join(home, 'paybatch.lock'), { force: true });
      expect((await runCli(['run', '--wait', '1s'], { env })).code).toBe(1);
    } finally {
      watching.child.kill('SIGKILL');
      await watching.exited;
    }
    // Killed with SIGKILL, its lease is left behind: the next run takes it over at once (its process is gone).
    const after = await runCli(['run', '--wait', '1s'], { env });
    expect(after.code, after.stderr).toBe(0);
  });

  it('stops at once when idle, and a second signal forces the exit', { timeout: 30_000 }, async () => {
    const idle = await startWatch(env);
    const sentAt = Date.now();
    idle.child.kill('SIGINT');
    expect((await idle.exited).code, idle.stderr()).toBe(0);
    expect(Date.now() - sentAt).toBeLessThan(3_000);

    // Calls that take three seconds: the daemon is still waiting for them when the second signal comes.
    await operator(sandbox, 'PUT', '/faults', { latency: { rate: 1, min_ms: 3000, max_ms: 3000 } });
    try {
      const creates = (): number => sandbox.calls.figures().create?.calls ?? 0;
      const createsBefore = creates();
      copyFileSync(template('templates/nga-cash.csv'), join(home, 'inbox', 'slow-service.csv'));
      const watching = await startWatch(env);
      await eventually(() => /intake accepted/.test(watching.stderr()), 10_000, 'the file taken');
      // Past the corridor read (a read: a stop ends it at once), into the creates (writes: a stop waits for them): a
      // create has reached the service, whose answer takes 3 s.
      await eventually(() => creates() > createsBefore, 15_000, 'a create sent');
      watching.child.kill('SIGTERM');
      await eventually(() => /SIGTERM: stopping/.test(watching.stderr()), 5_000, 'the first signal seen');
      watching.child.kill('SIGTERM');
      const exit = await watching.exited;
      expect(exit.code, watching.stderr()).toBe(130);
      expect(watching.stderr()).toMatch(/SIGTERM again: stopping now/);
    } finally {
      await operator(sandbox, 'DELETE', '/faults');
    }
  });
});
