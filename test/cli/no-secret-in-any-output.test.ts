/**
 * Secrets stay secret: after a full run (run, watch with webhooks, cancel,
 * status, reports, a rejected file's report), no log line, printed line, result
 * file or report holds the API secret or a full account number of the input.
 * The input files themselves (processing/, archive/, failed/*.csv) are the
 * only places account numbers may be.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/start.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { BIN, runCli } from '../helpers/cli.js';
import { eventually } from '../helpers/daemon.js';
import { FAST_ENGINE, FAST_SANDBOX, template } from '../helpers/engine.js';

const SECRET = `paybatch-test-secret-${process.pid}-b9f3c2`;
const INPUTS = ['templates/gbr-bank.csv', 'templates/eur-iban-bank.csv', 'templates/global-usd-bank.csv', 'templates/nga-bank.csv', 'templates/nga-cash.csv', 'demo-batch.csv'];

/** Every full account number in the inputs: IBANs (as written and without spaces) and bank account numbers. */
function accountNumbers(): string[] {
  const found = new Set<string>();
  for (const name of INPUTS) {
    for (const row of parse(readFileSync(template(name)), { columns: true }) as Record<string, string>[]) {
      for (const column of ['recipient_iban', 'recipient_bank_account']) {
        const value = row[column]?.trim();
        if (value && value.replace(/\s/g, '').length >= 8) {
          found.add(value);
          found.add(value.replace(/\s/g, ''));
        }
      }
    }
  }
  return [...found];
}

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('no secret and no full account number in logs, output, results or reports', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-secrets-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('after a full run', { timeout: 90_000 }, async () => {
    const sandbox = await startSandbox({ config: { ...FAST_SANDBOX, api_secret: SECRET } });
    const printed: string[] = [];
    try {
      const home = join(dir, 'ws');
      const workspace = openWorkspace(home);
      writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({
        engine: FAST_ENGINE, watch: { stable_ms: 200, listen: { port: 0 } }, reports: { service_ledger_url: `${sandbox.operatorUrl}/ledger` },
      }));
      const env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: sandbox.url, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET: SECRET };
      const cli = async (args: string[]): Promise<void> => {
        const result = await runCli(args, { env });
        printed.push(result.stdout, result.stderr);
        expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBeLessThan(2);
      };

      // run: the templates are paid; the demo batch has invalid rows and is rejected with a report.
      for (const name of INPUTS) copyFileSync(template(name), join(workspace.folders.inbox, name.replace('templates/', '')));
      await cli(['run', '--wait', '5s', '--progress-every', '1s']);
      await cli(['validate', template('demo-batch.csv')]);

      // watch, with webhooks, and a batch dropped while it runs.
      const watch = spawn(process.execPath, [BIN, 'watch'], { env: { ...process.env, ...env } });
      let watchOutput = '';
      watch.stdout.on('data', (d: Buffer) => (watchOutput += d.toString()));
      watch.stderr.on('data', (d: Buffer) => (watchOutput += d.toString()));
      await eventually(() => /webhooks received at/.test(watchOutput), 15_000, 'watch started');
      writeFileSync(join(workspace.folders.inbox, 'again.csv'), readFileSync(template('templates/eur-iban-bank.csv'), 'utf8').replace(/EUR-2026-/g, 'AGAIN-'));
      await eventually(() => /intake accepted/.test(watchOutput), 15_000, 'the file taken');
      // Its rows paid and followed to their end: what watch says and writes meanwhile is scanned below.
      await eventually(() => /batch settled/.test(watchOutput.slice(watchOutput.search(/intake accepted/))), 20_000, 'the batch taken settled');
      watch.kill('SIGTERM');
      await new Promise((resolve) => watch.on('close', resolve));
      printed.push(watchOutput);

      await cli(['status']);
      await cli(['status', '--json']);
      const today = new Date().toISOString().slice(0, 10);
      await cli(['report', '--date', today]);
      await cli(['report', '--date', today, '--format', 'json']);
      await cli(['webhooks', 'list']);

      const scanned = [
        join(home, 'paybatch.log'),
        ...filesUnder(workspace.folders.outbox),
        ...readdirSync(workspace.folders.failed).filter((f) => !f.endsWith('.csv')).map((f) => join(workspace.folders.failed, f)),
      ];
      expect(scanned.some((f) => f.endsWith('.report.txt'))).toBe(true); // the rejected demo batch's report is among them
      expect(scanned.some((f) => f.includes('reconciliation-'))).toBe(true);
      const texts = [...scanned.map((f) => ({ where: f, text: readFileSync(f, 'utf8') })), ...printed.map((text, i) => ({ where: `printed output ${i}`, text }))];
      const accounts = accountNumbers();
      expect(accounts.length).toBeGreaterThan(10);
      for (const { where, text } of texts) {
        expect(text.includes(SECRET), `the API secret in ${where}`).toBe(false);
        for (const account of accounts) expect(text.includes(account), `account number ${account.slice(0, 4)}… in ${where}`).toBe(false);
      }
    } finally {
      await sandbox.stop();
    }
  });
});
