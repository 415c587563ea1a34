import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import { runCli } from '../helpers/cli.js';
import { FAST_ENGINE, FAST_SANDBOX, template } from '../helpers/engine.js';

describe('paybatch run and paybatch demo, as commands', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-run-cli-'));
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ config: FAST_SANDBOX });
  });
  afterAll(async () => {
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('pays the inbox, prints one line per batch with the results file, and exits 0', async () => {
    const home = join(dir, 'ws');
    const env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: sandbox.url, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET: sandbox.apiSecret };
    expect((await runCli(['run', '--wait', '5s'], { env })).stdout).toMatch(/nothing to do/);
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ engine: FAST_ENGINE }));
    copyFileSync(template('templates/eur-iban-bank.csv'), join(home, 'inbox', 'eur.csv'));
    const result = await runCli(['run', '--wait', '10s'], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/using payout service http:\/\/127\.0\.0\.1:\d+\/v1 \(key sandbox-key\)/);
    expect(result.stderr).not.toContain(sandbox.apiSecret);
    expect(result.stdout).toMatch(/B\d{8}-[0-9a-f]{8} \(eur\.csv\): 3 rows: paid 3; all final/);
    const [resultsFile] = readdirSync(join(home, 'outbox')).filter((f) => f.endsWith('.results.csv'));
    expect(readFileSync(join(home, 'outbox', resultsFile as string), 'utf8').split('\n')[0]).toBe(
      'line,external_id,transaction_id,state,state_reason,state_reason_code,input_amount_in_cents,input_currency,output_amount_in_cents,output_currency,error');
    const log = readFileSync(join(home, 'paybatch.log'), 'utf8');
    expect(log).not.toContain(sandbox.apiSecret);
    expect(log).not.toContain('DE89370400440532013000');
  });

  it('cancel: says when no row matches, and exits 0', async () => {
    const home = join(dir, 'ws');
    const env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: sandbox.url, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET: sandbox.apiSecret };
    const result = await runCli(['cancel', '--batch', 'B00000000-none', '--state', 'error,manual', '--wait', '1s'], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('no row matched: nothing to cancel\n');
    expect((await runCli(['cancel'], { env })).code).toBe(64);
  });

  it('exits 77 with a message when the service refuses the credentials', async () => {
    const home = join(dir, 'refused');
    const env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: sandbox.url, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET: 'wrong-secret' };
    const setup = await runCli(['run', '--wait', '1s'], { env });
    expect(setup.code).toBe(0);
    copyFileSync(template('templates/nga-cash.csv'), join(home, 'inbox', 'cash.csv'));
    const result = await runCli(['run', '--wait', '5s'], { env });
    expect(result.code).toBe(77);
    expect(result.stderr).toMatch(/refused our credentials \(401/);
    expect(result.stderr).not.toContain('wrong-secret');
  });

  it('npm start: the demo pays the demo batch on the embedded sandbox and says where the results are', async () => {
    const result = await runCli(['demo', '--dir', join(dir, 'demo')]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/using embedded sandbox/);
    expect(result.stdout).toMatch(/demo-batch\.csv\): 18 rows: .*invalid 2.*paid 12/);
    expect(result.stdout).toMatch(/results .*\.results\.csv/);
  }, 30_000);
});
