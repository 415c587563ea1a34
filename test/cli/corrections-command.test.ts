/** paybatch corrections, resubmit and retry as commands (the built binary), on a batch paid against the suite.sandbox. */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { FAST_ENGINE, FAST_INTAKE, fastSandboxForSuite, template } from '../helpers/engine.js';

describe('paybatch corrections, resubmit and retry, as commands', () => {
  const suite = fastSandboxForSuite('paybatch-corrections-cli-');
  const { dir } = suite;

  it('writes the corrections of a batch, puts a fixed file in the inbox whole, and refuses a retry that would need fixes', { timeout: 60_000 }, async () => {
    const home = join(dir, 'ws');
    mkdirSync(join(home, 'inbox'), { recursive: true });
    const env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: suite.sandbox.url, PAYBATCH_API_KEY: suite.sandbox.apiKey, PAYBATCH_API_SECRET: suite.sandbox.apiSecret };
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ intake: FAST_INTAKE, engine: FAST_ENGINE, batch: { invalid_rows: 'skip_invalid' } }));
    copyFileSync(template('demo-batch.csv'), join(home, 'inbox', 'demo.csv'));
    const run = await runCli(['run', '--wait', '2s'], { env });
    const batch = /(B\d{8}-[0-9a-f]{8})/.exec(run.stdout)?.[1] as string;
    expect(batch, run.stderr).toBeTruthy();

    const written = await runCli(['corrections', batch], { env });
    expect(written.code, written.stderr).toBe(0);
    const file = written.stdout.trim();
    expect(file).toBe(join(home, 'outbox', `${batch}.corrections.csv`));
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n')[0]).toMatch(/^external_id,type,.*,original_batch,original_line,unpaid_state,unpaid_reason,to_fix$/);
    expect(written.stderr).toMatch(/line 19 .* invalid .*→ fix: /);

    const fixed = join(dir, 'fixed.csv');
    writeFileSync(fixed, text);
    const resubmitted = await runCli(['resubmit', fixed], { env });
    expect(resubmitted.code, resubmitted.stderr).toBe(0);
    expect(readFileSync(join(home, 'inbox', basename(fixed)), 'utf8')).toBe(text);

    const needsFixes = await runCli(['retry', batch, '--reason', 'recipient_iban_invalid'], { env });
    expect(needsFixes.code).toBe(64);
    expect(needsFixes.stderr).toMatch(/need their details fixed first: use paybatch corrections/);
    const nothing = await runCli(['retry', batch, '--reason', 'insufficient_funds'], { env });
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toMatch(/no unpaid row for insufficient_funds/);
    expect(existsSync(join(home, 'inbox'))).toBe(true);
  });
});
