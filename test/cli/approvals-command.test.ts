/**
 * The finance team's flow, as commands: keys generated for two approvers, the
 * policy configured, a file dropped, previewed, approved by one person (the
 * batch needs two), then the second; `run` killed with SIGKILL at random
 * moments after the approval resumes without asking again and funds each row
 * exactly once.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import { BIN, runCli } from '../helpers/cli.js';
import { eventually } from '../helpers/daemon.js';
import { FAST_ENGINE, FAST_INTAKE, FAST_SANDBOX, debitsPerTransaction, template } from '../helpers/engine.js';

/** Every call that has reached the sandbox's service interface so far. */
const callsMade = (sandbox: RunningSandbox): number => sandbox.calls.figures().overall?.calls ?? 0;

describe('approvals as commands', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-approvals-cli-'));
  const home = join(dir, 'ws');
  const keys = join(dir, 'keys');
  let sandbox: RunningSandbox;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    // Calls take 80 ms: the kills land while the batch is being sent.
    sandbox = await startSandbox({ config: { ...FAST_SANDBOX, payout: { ...FAST_SANDBOX.payout, delay_ms: [300, 1200] }, faults: { latency: { rate: 1, min_ms: 80, max_ms: 80 } } } });
    env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: sandbox.url, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET: sandbox.apiSecret };
    mkdirSync(keys);
  });
  afterAll(async () => {
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  // Some twenty commands one after another: 48 s on a quiet machine, past 90 s under two busy loops (test:busy).
  it('keys, preview, two approvals, and SIGKILLs after approval: each row funded once, no new approval asked', { timeout: 240_000 }, async () => {
    for (const name of ['ada', 'grace', 'inbox']) {
      const made = await runCli(['keys', 'generate', name, '--dir', keys], { env });
      expect(made.code, made.stderr).toBe(0);
      expect(statSync(join(keys, `${name}.key`)).mode & 0o777).toBe(0o600);
    }
    expect((await runCli(['keys', 'generate', 'ada', '--dir', keys], { env })).stderr).toMatch(/already exists: keys are never overwritten/);
    expect((await runCli(['keys', 'generate', 'eve', '--dir', join(home, 'inbox')], { env })).stderr).toMatch(/inside the paybatch workspace: a private key never goes there/);
    expect((await runCli(['run', '--wait', '1s'], { env })).code).toBe(0);
    const person = (name: string, role: string) => ({ role, public_key_file: join(keys, `${name}.pub`) });
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({
      intake: FAST_INTAKE, engine: { ...FAST_ENGINE, concurrency: 2 },
      approvals: {
        enabled: true, inbox_submitter: 'inbox', people: { ada: person('ada', 'approver'), grace: person('grace', 'approver'), inbox: person('inbox', 'submitter') },
        rules: [{ approvers: 1 }, { currency: 'USD', total_at_least: '1000.00', approvers: 2 }],
      },
    }));
    const lines = readFileSync(template('templates/global-usd-bank.csv'), 'utf8').trim().split('\n');
    // 30 payouts to 30 accounts (each ending in 21, an ordinary outcome at the sandbox), not one payment repeated (a possible duplicate).
    const rows = Array.from({ length: 30 }, (_, i) => (lines[2] as string).replace(/^USD-2026-0002/, `K-${i + 1}`).replace(',987654321,', `,9876${100 + i}21,`));
    writeFileSync(join(home, 'inbox', 'usd.csv'), `${lines[0]}\n${rows.join('\n')}\n`);
    writeFileSync(join(home, 'inbox', 'usd.csv.done'), '');

    const waiting = await runCli(['run', '--wait', '1s'], { env });
    expect(waiting.code, waiting.stderr).toBe(0);
    expect(waiting.stderr).toMatch(/approval requested: batch (B\S+), file usd\.csv, preview paybatch preview \1/);
    const batch = /approval requested: batch (B\S+),/.exec(waiting.stderr)?.[1] as string;
    expect([...sandbox.store.allTransactions()]).toEqual([]);

    const preview = await runCli(['preview', batch, '--as', 'ada'], { env });
    expect(preview.code, preview.stderr).toBe(0);
    expect(preview.stdout).toMatch(/rows to send 30; invalid 0/);
    expect(preview.stdout).toMatch(/to pay out in USD: 2,253\.00 USD/);
    expect(preview.stdout).toMatch(/funding in USD: about 2,253\.00 USD \(exact\); ceiling proposed 2,320\.59 USD/);
    expect(preview.stdout).toMatch(/approvers required: 2/);

    expect((await runCli(['approve', batch, '--key', join(keys, 'inbox.key'), '--as', 'inbox'], { env })).stderr).toMatch(/inbox submitted batch .* and cannot approve it/);
    const first = await runCli(['approve', batch, '--key', join(keys, 'ada.key'), '--as', 'ada'], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/approved by ada: batch .*, 30 rows, 2,253\.00 USD; funding at most 2,320\.59 USD/);
    expect(first.stdout).toMatch(/awaiting approval: 1 of 2 approvals/);
    expect((await runCli(['approve', batch, '--key', join(keys, 'grace.key'), '--as', 'grace'], { env })).stdout).toMatch(/is approved \(ada, grace\)/);

    // Killed at random moments while sending; each start verifies the approvals again, none is asked for.
    let killed = 0;
    for (let kill = 0; kill < 6; kill++) {
      const child = spawn(process.execPath, [BIN, 'run', '--wait', '20s'], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const closed = new Promise<number | null>((r) => child.on('close', r));
      // Sending: a call of this run has reached the service (its approvals verified), or it has already ended; then a
      // random moment: after a random number of its calls more (events at the sandbox, not a time).
      const callsBefore = callsMade(sandbox);
      let ended = false;
      void closed.then(() => (ended = true));
      await eventually(() => ended || callsMade(sandbox) > callsBefore, 20_000, 'a call of the run');
      const killAfter = callsMade(sandbox) + Math.floor(Math.random() * 6);
      await eventually(() => ended || callsMade(sandbox) >= killAfter, 20_000, 'the run\'s calls before the kill');
      child.kill('SIGKILL');
      const code = await closed;
      // Killed, or finished before the kill: never refused for want of an approval.
      expect(code === null || code === 0, stderr).toBe(true);
      if (code === null) killed += 1;
    }
    expect(killed).toBeGreaterThanOrEqual(3);
    const last = await runCli(['run', '--wait', '20s'], { env });
    expect(last.code, last.stderr).toBe(0);
    const status = JSON.parse((await runCli(['status', batch, '--json'], { env })).stdout) as { batches: { by_state: Record<string, number>; status: string }[] };
    expect(status.batches[0]).toMatchObject({ status: 'settled', by_state: { paid: 30 } });
    const debits = debitsPerTransaction(sandbox);
    expect(debits.size).toBe(30);
    expect([...debits.values()].every((n) => n === 1)).toBe(true);
    const verify = await runCli(['audit', 'verify'], { env });
    expect(verify.stdout).toMatch(/^audit trail intact/);
    const trail = (await runCli(['audit', 'export'], { env })).stdout.trim().split('\n').map((l) => JSON.parse(l) as { actor: string; action: string });
    expect(trail.filter((e) => e.action === 'approved').map((e) => e.actor)).toEqual(['ada', 'grace']);
    expect(trail.filter((e) => e.action === 'preview').map((e) => e.actor)).toEqual(['ada']);
  });
});
