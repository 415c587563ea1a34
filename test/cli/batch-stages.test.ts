/**
 * Words for where a batch is, on the built binary: a batch awaiting approval,
 * rejected, or not sent yet is never "in flight"; `run` says per file what it
 * waits for, stops waiting when nothing can move without a person, and ends 69
 * when the service did not answer; on a terminal (a pseudo-terminal made by
 * util-linux `script`) the progress shows its stages, and Ctrl-C says what it
 * stopped and exits 130.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import { BIN, runCli } from '../helpers/cli.js';
import { FAST_ENGINE, FAST_INTAKE, IN_FLIGHT_SANDBOX, template } from '../helpers/engine.js';


describe('where a batch is, in words, on the built binary', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-stages-'));
  let sandbox: RunningSandbox;
  let silent: Server;
  const held: Socket[] = [];
  const envOf = (home: string, url = sandbox.url): NodeJS.ProcessEnv => ({ PAYBATCH_HOME: home, PAYBATCH_BASE_URL: url, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET: sandbox.apiSecret, TZ: 'UTC' });
  /** A workspace made by a first run, with this configuration. */
  async function workspace(name: string, config: Record<string, unknown>): Promise<{ home: string; env: NodeJS.ProcessEnv }> {
    const home = join(dir, name);
    const env = envOf(home);
    expect((await runCli(['run', '--wait', '1s'], { env })).code).toBe(0);
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify(config));
    return { home, env };
  }
  beforeAll(async () => {
    sandbox = await startSandbox({ config: IN_FLIGHT_SANDBOX });
    // A service that takes connections and never answers (a process stopped, a proxy hung).
    silent = createServer((socket) => void held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await sandbox.stop();
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('awaiting approval: run stops waiting at once and says so; status names who may approve, and after reject says rejected; never "in flight"', { timeout: 60_000 }, async () => {
    const keys = join(dir, 'keys');
    mkdirSync(keys);
    for (const name of ['ada', 'grace', 'inbox']) expect((await runCli(['keys', 'generate', name, '--dir', keys])).code).toBe(0);
    const person = (name: string, role: string) => ({ role, public_key_file: join(keys, `${name}.pub`) });
    const { home, env } = await workspace('approvals', {
      intake: FAST_INTAKE, engine: FAST_ENGINE,
      approvals: { enabled: true, inbox_submitter: 'inbox', people: { ada: person('ada', 'approver'), grace: person('grace', 'approver'), inbox: person('inbox', 'submitter') } },
    });
    copyFileSync(template('templates/eur-iban-bank.csv'), join(home, 'inbox', 'eur.csv'));
    const started = Date.now();
    const run = await runCli(['run', '--wait', '5m'], { env });
    expect(run.code, run.stderr).toBe(0);
    // Not five minutes: nothing could move.
    expect(Date.now() - started).toBeLessThan(30_000);
    const batch = /^(B\S+) \(eur\.csv\)/m.exec(run.stdout)?.[1] as string;
    expect(run.stdout).toContain(`${batch} (eur.csv): 3 rows: not_sent_yet 3; awaiting approval by ada or grace: nothing is sent before it; the request expires `);
    expect(run.stdout).toMatch(new RegExp(`\\nstopped waiting: nothing more can move without a person \\(${batch} awaiting approval by ada or grace`));
    expect(run.stdout).not.toMatch(/in flight/);

    const status = await runCli(['status'], { env });
    expect(status.stdout).toMatch(new RegExp(`${batch}  eur\\.csv  accepted  \\(received [^)]+\\)\\n  awaiting approval by ada or grace: nothing is sent before it`));
    expect(status.stdout).not.toMatch(/in flight|a call is under way/);

    expect((await runCli(['reject', batch, '--reason', 'wrong month', '--as', 'grace'], { env })).code).toBe(0);
    const after = await runCli(['status', batch], { env });
    // At once, not at the next run.
    expect(after.stdout).toMatch(/\n {2}rejected \(rejected by grace: wrong month\); nothing of it was sent\n/);
    expect(after.stdout).not.toMatch(/in flight/);
    const json = JSON.parse((await runCli(['status', batch, '--json'], { env })).stdout) as { batches: { stage: { kind: string }; in_flight: number }[] };
    expect(json.batches[0]).toMatchObject({ stage: { kind: 'rejected' }, in_flight: 0 });
  });

  it('a file not yet whole when --wait ends: the wait said per file, nothing counted in flight, exit 0', { timeout: 60_000 }, async () => {
    const { home, env } = await workspace('file-wait', { intake: { stable_ms: 60_000 }, engine: FAST_ENGINE });
    copyFileSync(template('templates/eur-iban-bank.csv'), join(home, 'inbox', 'pay.csv'));
    const run = await runCli(['run', '--wait', '2s'], { env });
    expect(run.code, run.stderr).toBe(0);
    const wait = /waiting until \d\d:\d\d:\d\d for inbox\/pay\.csv to stay unchanged \(no completion marker; write pay\.csv\.done to take it at once\)/;
    expect(run.stderr).toMatch(new RegExp(`paybatch: ${wait.source}`));
    expect(run.stdout).toMatch(new RegExp(`^not taken yet: ${wait.source}; the next run looks again\\n$`));
    expect(run.stdout).not.toMatch(/in flight/);
  });

  it('the service stops answering: a short --wait ends 69 with the message a longer one gives, and the log says so', { timeout: 90_000 }, async () => {
    // A call is given up after 2 s, not the default 15 s: the run's end is what is checked, not the length of the timeout.
    const { home, env } = await workspace('silent', { intake: FAST_INTAKE, engine: FAST_ENGINE, service: { timeout_ms: 2_000 } });
    copyFileSync(template('templates/eur-iban-bank.csv'), join(home, 'inbox', 'eur.csv'));
    const first = await runCli(['run', '--wait', '3s'], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/3 rows: processing 3; 3 rows in flight at the service, next read at \d\d:\d\d:\d\d\n/);
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`;
    const second = await runCli(['run', '--wait', '3s'], { env: envOf(home, url) });
    expect(second.code, second.stderr).toBe(69);
    expect(second.stdout).toMatch(/\nthe payout service stopped answering \(reading tr_\w+: no answer[^\n]*\); what waits is taken up by the next run\n$/);
    expect(second.stderr).toMatch(/\npaybatch: the payout service stopped answering: reading tr_\w+: no answer/);
    expect(readFileSync(join(home, 'paybatch.log'), 'utf8')).toMatch(/"event":"service_not_answering","reason":"reading tr_\w+: no answer[^"]*","wait_ms":3000/);
  });

  it('on a terminal: the file wait line, the progress by stage with the next change, and Ctrl-C\'s words (exit 130)', { timeout: 60_000 }, async () => {
    const { home, env } = await workspace('terminal', { intake: { stable_ms: 1500 }, engine: FAST_ENGINE });
    copyFileSync(template('templates/eur-iban-bank.csv'), join(home, 'inbox', 'pay.csv'));
    // util-linux `script` gives the child a pseudo-terminal; a 0x03 typed into it is Ctrl-C, a SIGINT from the terminal.
    const child = spawn('script', ['-qfec', `${process.execPath} ${BIN} run --wait 60s`, '/dev/null'], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no funded rows on the terminal: ${screen}`)), 40_000);
      child.stdout.on('data', (d: Buffer) => {
        screen += d.toString();
        if (/sent 3 {2}funded 3 {2}final 0\/3 {2}3 rows in flight at the service, next read at \d\d:\d\d:\d\d/.test(screen)) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    child.stdin.write('\x03');
    expect(await exited).toBe(130);
    const text = screen.replace(/\r/g, '');
    expect(text).toMatch(/paybatch: waiting until \d\d:\d\d:\d\d for inbox\/pay\.csv to stay unchanged \(no completion marker; write pay\.csv\.done to take it at once\)/);
    // The stages before the final states: waiting for the second look, then sending or sent, then funded.
    expect(text).toMatch(/B\S+ \|[░█]+\| sent 0 {2}funded 0 {2}final 0\/3 {2}waiting until \d\d:\d\d:\d\d to see its file unchanged once more before anything is sent/);
    expect(text).toMatch(/paybatch: stopped by Ctrl-C \(SIGINT\) while following the rows sent\.\n {2}B\S+ \(pay\.csv\): 3 rows in flight at the service, next read at \d\d:\d\d:\d\d\n3 rows stay in flight at the service and are followed by the next run\. Nothing is lost and nothing is paid twice: the next paybatch run resumes from where this one stopped\.\n/);
    // And it does: the next run follows them.
    const next = await runCli(['status'], { env });
    expect(next.stdout).toMatch(/\n {2}3 rows in flight at the service, next read at/);
  });
});
