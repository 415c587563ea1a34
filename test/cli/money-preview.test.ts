/**
 * What a person reads about money, on the built binary: `validate` and `preview`
 * warn of a row far above the batch's usual amounts (a 99,999,999.99 GBP row
 * typed in a spreadsheet) and of one over batch.warn_row_amount; `preview`
 * lists the rows to send a page at a time (every row with --all and --json);
 * `run` and `status` give amounts in major units with thousands separators.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { FAST_ENGINE, FAST_INTAKE, fastSandboxForSuite, template } from '../helpers/engine.js';

/** The GBR template's first row once per [external_id, amount]. */
function gbrBatch(file: string, rows: readonly (readonly [string, string])[]): string {
  const [header, first] = readFileSync(template('templates/gbr-bank.csv'), 'utf8').split('\n') as [string, string];
  const cells = first.split(',');
  writeFileSync(file, `${header}\n${rows.map(([id, amount]) => [id, ...cells.slice(1, 4), amount, ...cells.slice(5)].join(',')).join('\n')}\n`);
  return file;
}

const usual = (count: number): [string, string][] => Array.from({ length: count }, (_, i) => [`P-${i + 1}`, `${250 + i}.00`]);

describe('money and previews, as commands print them', () => {
  const suite = fastSandboxForSuite('paybatch-money-cli-');
  const { dir } = suite;
  const env = (home: string): NodeJS.ProcessEnv => ({
    PAYBATCH_HOME: home, PAYBATCH_BASE_URL: suite.sandbox.url, PAYBATCH_API_KEY: suite.sandbox.apiKey, PAYBATCH_API_SECRET: suite.sandbox.apiSecret,
  });

  it('validate names a 99,999,999.99 GBP row among rows of a few hundred pounds, in text and JSON', async () => {
    const file = gbrBatch(join(dir, 'typo.csv'), [...usual(9), ['TYPO-1', '99999999.99']]);
    const noWorkspace = { PAYBATCH_HOME: join(dir, 'none') };
    const text = await runCli(['validate', file], { env: noWorkspace });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/Amounts to check before anyone approves \(1\)\n\s+line 11\s+TYPO-1\s+99,999,999\.99 GBP is over 10 times the batch's median 254\.50 GBP/);
    expect(text.stdout).toMatch(/GBP\s+100,002,285\.99\s+\(10000228599 minor units\)/);
    const json = JSON.parse((await runCli(['validate', file, '--json'], { env: noWorkspace })).stdout) as { outliers: { line: number; because: string[] }[] };
    expect(json.outliers).toEqual([expect.objectContaining({ line: 11, external_id: 'TYPO-1', currency: 'GBP', amount: '9999999999', because: ['times_median'] })]);
    // A large CSV is checked on worker threads: the amounts and the external_id come back from them.
    const everyCore = join(dir, 'every-core.config.json');
    writeFileSync(everyCore, JSON.stringify({ batch: { parallel_min_bytes: 0 } }));
    const threads = JSON.parse((await runCli(['validate', file, '--json', '--config', everyCore], { env: noWorkspace })).stdout) as { outliers: unknown[] };
    expect(threads.outliers).toEqual([expect.objectContaining({ line: 11, external_id: 'TYPO-1', currency: 'GBP', amount: '9999999999', because: ['times_median'] })]);
    const quiet = await runCli(['validate', gbrBatch(join(dir, 'quiet.csv'), usual(9))], { env: noWorkspace });
    expect(quiet.stdout).not.toMatch(/Amounts to check/);
  });

  it('validate warns of a row over batch.warn_row_amount', async () => {
    const home = join(dir, 'warn-config');
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ batch: { warn_row_amount: { GBP: '255.00' } } }));
    const result = await runCli(['validate', gbrBatch(join(dir, 'warn.csv'), usual(8)), '--home', home], { env: { PAYBATCH_HOME: home } });
    expect(result.stdout).toMatch(/Amounts to check before anyone approves \(2\)/);
    expect(result.stdout).toMatch(/line 9\s+P-8\s+257\.00 GBP is over batch\.warn_row_amount 255\.00 GBP/);
    expect(result.stdout).toMatch(/line 8\s+P-7\s+256\.00 GBP is over batch\.warn_row_amount 255\.00 GBP/);
  });

  // Several previews of the built binary in a row: under the default 20 s bound on a quiet machine, not beside other work.
  it('preview lists the rows to send a page at a time, every row with --all and --json, and the outlier', async () => {
    const home = join(dir, 'preview');
    expect((await runCli(['run', '--wait', '1s'], { env: env(home) })).code).toBe(0);
    const file = gbrBatch(join(dir, 'thirty.csv'), [...usual(29), ['BIG-1', '1000000.00']]);
    const first = await runCli(['preview', file], { env: env(home) });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/WARNING: amounts to check before anyone approves \(1\):\n\s+line 31\s+BIG-1\s+1,000,000\.00 GBP is over 10 times/);
    expect(first.stdout).toMatch(/rows to send, 1 to 25 of 30 \(page 1 of 2\):/);
    expect(first.stdout).toMatch(/LINE\s+EXTERNAL_ID\s+RECIPIENT\s+ACCOUNT\s+AMOUNT\s+CORRIDOR/);
    expect(first.stdout).toMatch(/\n\s+2\s+P-1\s+Alan Turing\s+…4958\s+250\.00 GBP\s+gbr-bank/);
    expect(first.stdout).toContain(`more: paybatch preview ${file} --page 2 for the next 5, --all for every row, --json for every row as JSON`);
    expect(first.stdout).not.toContain('66374958');
    expect(first.stdout).toMatch(/to pay out in GBP: 1,007,656\.00 GBP/);
    const second = await runCli(['preview', file, '--page', '2'], { env: env(home) });
    expect(second.stdout).toMatch(/rows to send, 26 to 30 of 30 \(page 2 of 2\):/);
    expect(second.stdout).toMatch(/\n\s+31\s+BIG-1\s+Alan Turing\s+…4958\s+1,000,000\.00 GBP\s+gbr-bank/);
    const all = await runCli(['preview', file, '--all'], { env: env(home) });
    expect(all.stdout).toMatch(/rows to send, all 30:/);
    expect(all.stdout.match(/Alan Turing/g)).toHaveLength(30);
    const json = JSON.parse((await runCli(['preview', file, '--json'], { env: env(home) })).stdout) as { payees: Record<string, unknown>[]; outliers: unknown[] };
    expect(json.payees).toHaveLength(30);
    expect(json.payees[0]).toEqual({ line: 2, external_id: 'P-1', recipient_name: 'Alan Turing', account: '…4958', amount: '25000', currency: 'GBP', amount_text: '250.00 GBP', corridor: 'gbr-bank' });
    expect(json.outliers).toHaveLength(1);
    expect((await runCli(['preview', file, '--page', '0'], { env: env(home) })).code).not.toBe(0);
  }, 60_000);

  it('run and status give amounts in major units with thousands separators, not minor units', { timeout: 60_000 }, async () => {
    const home = join(dir, 'paid');
    expect((await runCli(['run', '--wait', '1s'], { env: env(home) })).code).toBe(0);
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ intake: FAST_INTAKE, engine: FAST_ENGINE }));
    gbrBatch(join(home, 'inbox', 'pay.csv'), [['M-1', '1250.00'], ['M-2', '310.45']]);
    const run = await runCli(['run', '--wait', '20s'], { env: env(home) });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/\n {2}paid out 1,560\.45 GBP; funded [\d,]+\.\d\d USD\n/);
    const status = await runCli(['status'], { env: env(home) });
    expect(status.stdout).toMatch(/\n {2}funded \d{1,3}(,\d{3})*\.\d\d USD; paid out 1,560\.45 GBP\n/);
    expect(status.stdout).not.toMatch(/minor units/);
  });
});
