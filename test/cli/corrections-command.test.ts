/** paybatch corrections, resubmit and retry as commands (the built binary), on a batch paid against the suite.sandbox. */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
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

  it('round-trips values starting =, +, - and @ exactly: the file carries them unguarded, and resubmit sends them as they were', { timeout: 60_000 }, async () => {
    const home = join(dir, 'formulas');
    mkdirSync(join(home, 'inbox'), { recursive: true });
    const env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: suite.sandbox.url, PAYBATCH_API_KEY: suite.sandbox.apiKey, PAYBATCH_API_SECRET: suite.sandbox.apiSecret };
    // The four rows pay one account the same amount on purpose (only their texts differ): the duplicate check is off here.
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ intake: FAST_INTAKE, engine: FAST_ENGINE, batch: { invalid_rows: 'skip_invalid', duplicate_window: 'off' } }));
    const [header, first] = parse(readFileSync(template('templates/gbr-bank.csv')), { columns: false }) as string[][] as [string[], string[]];
    const at = (column: string): number => header.indexOf(column);
    // Each row invalid by a phone number too short: it ends unpaid, to be fixed in its corrections file.
    const values = [['=HYPERLINK("http://evil.example","x")', '=Ada'], ['+SUM(1)', '+Bob'], ['-2+3', '-Cy'], ['@cmd', '@Di']];
    const rows = values.map(([id, name]) => first.map((v, i) => (i === at('external_id') ? id : i === at('recipient_first_name') ? name : i === at('recipient_phone_number') ? '+4474001' : v)));
    writeFileSync(join(home, 'inbox', 'formulas.csv'), stringify([header, ...rows]));
    const run = await runCli(['run', '--wait', '2s'], { env });
    const batch = /(B\d{8}-[0-9a-f]{8})/.exec(run.stdout)?.[1] as string;
    expect(batch, run.stderr).toBeTruthy();

    const written = await runCli(['corrections', batch], { env });
    expect(written.code, written.stderr).toBe(0);
    const file = parse(readFileSync(written.stdout.trim()), { columns: true }) as Record<string, string>[];
    expect(file.map((r) => [r.external_id, r.recipient_first_name, r.to_fix])).toEqual(values.map(([id, name]) => [`${id}~R1`, name, 'recipient_phone_number']));

    const fixed = join(dir, 'formulas-fixed.csv');
    writeFileSync(fixed, stringify(file.map((r) => ({ ...r, recipient_phone_number: '+447400123457' })), { header: true }));
    const resubmitted = await runCli(['resubmit', fixed], { env });
    expect(resubmitted.code, resubmitted.stderr).toBe(0);
    const again = await runCli(['run', '--wait', '5s'], { env });
    expect(again.code, again.stderr).toBe(0);
    for (const [id, name] of values) {
      const sent = suite.sandbox.store.transactionByExternalId(`${id}~R1`);
      expect(sent, `${id}~R1 at the service`).toBeDefined();
      expect(sent?.recipient.first_name).toBe(name);
      expect(suite.sandbox.store.transactionByExternalId(`'${id}~R1`)).toBeUndefined();
    }
  });
});
