import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { runCli } from '../helpers/cli.js';
import { readWorkbook } from '../helpers/workbook.js';
import { FAST_ENGINE, FAST_INTAKE, fastSandboxForSuite, template } from '../helpers/engine.js';

describe('paybatch run and paybatch demo, as commands', () => {
  const suite = fastSandboxForSuite('paybatch-run-cli-');
  const { dir } = suite;

  // Two lanes at once: the demo, on its own embedded sandbox, spends its 15 s waiting for the rows the sandbox holds;
  // the run commands on the suite's sandbox go one after another meanwhile (several at once crowd a busy machine's
  // cores and make their --wait budgets too short).
  describe.concurrent('npm start', () => {
    it('npm start: the demo pays the demo batch on the embedded sandbox and says where the results are', async () => {
      const result = await runCli(['demo', '--dir', join(dir, 'demo')]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/using embedded sandbox/);
      expect(result.stdout).toMatch(/demo-batch\.csv\): 18 rows: .*invalid 2.*paid 12/);
      expect(result.stdout).toMatch(/results .*\.results\.csv/);
    }, 30_000);
  });

  describe.concurrent('paybatch run, one command after another', () => {
    it.sequential('pays the inbox, prints one line per batch with the results file, and exits 0', async () => {
      const home = join(dir, 'ws');
      const env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: suite.sandbox.url, PAYBATCH_API_KEY: suite.sandbox.apiKey, PAYBATCH_API_SECRET: suite.sandbox.apiSecret };
      expect((await runCli(['run', '--wait', '5s'], { env })).stdout).toMatch(/nothing to do/);
      writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ intake: FAST_INTAKE, engine: FAST_ENGINE }));
      copyFileSync(template('templates/eur-iban-bank.csv'), join(home, 'inbox', 'eur.csv'));
      const result = await runCli(['run', '--wait', '10s'], { env });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/using payout service http:\/\/127\.0\.0\.1:\d+\/v1 \(key sandbox-key\)/);
      expect(result.stderr).not.toContain(suite.sandbox.apiSecret);
      expect(result.stdout).toMatch(/B\d{8}-[0-9a-f]{8} \(eur\.csv\): 3 rows: paid 3; all final/);
      const [resultsFile] = readdirSync(join(home, 'outbox')).filter((f) => f.endsWith('.results.csv'));
      expect(readFileSync(join(home, 'outbox', resultsFile as string), 'utf8').split('\n')[0]).toBe(
        'external_id,recipient_name,output_amount,output_currency,state,state_reason,final_at,line,transaction_id,state_reason_code,input_amount,input_currency,output_amount_in_cents,input_amount_in_cents,error,corrects,next_step');
      const log = readFileSync(join(home, 'paybatch.log'), 'utf8');
      expect(log).not.toContain(suite.sandbox.apiSecret);
      expect(log).not.toContain('DE89370400440532013000');
    });

    it.sequential('takes a batch in when the temporary folder refuses the scratch file: the fingerprints stay in memory, one line says so', async () => {
      const { generateBatch } = await import('../../bench/generate-batch.js');
      const home = join(dir, 'no-tmp');
      const env = {
        PAYBATCH_HOME: home, PAYBATCH_BASE_URL: suite.sandbox.url, PAYBATCH_API_KEY: suite.sandbox.apiKey, PAYBATCH_API_SECRET: suite.sandbox.apiSecret,
        TMPDIR: join(dir, 'missing'),
      };
      // The workspace's folders, as a first command makes them (that command is tested above).
      openWorkspace(home);
      writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ intake: FAST_INTAKE, engine: FAST_ENGINE, batch: { invalid_rows: 'skip_invalid', scratch_after_bytes: 0 } }));
      // One sender on every row: its partition of the rules across rows spills at 256 rows.
      await generateBatch(join(home, 'inbox', 'big.csv'), 300, 1);
      const result = await runCli(['run', '--wait', '2s'], { env });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/scratch in memory: batch B\d{8}-[0-9a-f]{8}, file big\.csv, reason cannot make the scratch file for the rules across rows in .*missing .*ENOENT.*kept in memory instead/);
      expect(result.stderr).toMatch(/intake accepted: batch B\d{8}-[0-9a-f]{8}, file .*big\.csv/);
      expect(result.stdout).toMatch(/\(big\.csv\): 300 rows: /);
    });

    it.sequential('stops with exit 74 and one line when the disk fails a read of the scratch file (EIO); the next run takes the batch in', async () => {
      const { generateBatch } = await import('../../bench/generate-batch.js');
      const home = join(dir, 'eio-scratch');
      const scratch = join(dir, 'eio-tmp');
      mkdirSync(scratch);
      const env = {
        PAYBATCH_HOME: home, PAYBATCH_BASE_URL: suite.sandbox.url, PAYBATCH_API_KEY: suite.sandbox.apiKey, PAYBATCH_API_SECRET: suite.sandbox.apiSecret,
        TMPDIR: scratch,
      };
      // The workspace's folders, as a first command makes them (that command is tested above).
      openWorkspace(home);
      writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ intake: FAST_INTAKE, engine: FAST_ENGINE, batch: { invalid_rows: 'skip_invalid', scratch_after_bytes: 0 } }));
      await generateBatch(join(home, 'inbox', 'big.csv'), 300, 1);
      // The child's reads of its scratch file fail (test/helpers/eio-on-scratch-read.mjs); the rest of its disk is sound.
      const failingDisk = `--import ${new URL('../helpers/eio-on-scratch-read.mjs', import.meta.url).href}`;
      const failed = await runCli(['run', '--wait', '2s'], { env: { ...env, NODE_OPTIONS: [process.env.NODE_OPTIONS, failingDisk].filter(Boolean).join(' ') } });
      expect(failed.code, failed.stderr).toBe(74);
      expect(failed.stderr).toMatch(/\npaybatch: cannot read the scratch file for the rules across rows in .*eio-tmp \(the temporary folder; TMPDIR sets another\): EIO: i\/o error, read\n$/);
      expect(failed.stderr).not.toMatch(/a bug, please report it|\n\s+at /);
      expect(failed.stdout).toBe('');
      // Nothing is lost: the batch waits in intake, and the next run, its disk sound, takes it in.
      const again = await runCli(['run', '--wait', '2s'], { env });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toMatch(/\(big\.csv\): 300 rows: /);
    });

    it.sequential('cancel: says when there is no such batch, and exits 1', async () => {
      const home = join(dir, 'ws');
      const env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: suite.sandbox.url, PAYBATCH_API_KEY: suite.sandbox.apiKey, PAYBATCH_API_SECRET: suite.sandbox.apiSecret };
      const result = await runCli(['cancel', '--batch', 'B00000000-none', '--state', 'error,manual', '--wait', '1s'], { env });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(/no batch B00000000-none in .*: nothing to cancel\n$/);
      expect((await runCli(['cancel'], { env })).code).toBe(64);
    });

    it.sequential('exits 77 with a message when the service refuses the credentials', async () => {
      const home = join(dir, 'refused');
      const env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: suite.sandbox.url, PAYBATCH_API_KEY: suite.sandbox.apiKey, PAYBATCH_API_SECRET: 'wrong-secret' };
      const setup = await runCli(['run', '--wait', '1s'], { env });
      expect(setup.code).toBe(0);
      copyFileSync(template('templates/nga-cash.csv'), join(home, 'inbox', 'cash.csv'));
      writeFileSync(join(home, 'inbox', 'cash.csv.done'), '');
      const result = await runCli(['run', '--wait', '5s'], { env });
      expect(result.code).toBe(77);
      expect(result.stderr).toMatch(/refused our credentials \(401/);
      expect(result.stderr).not.toContain('wrong-secret');
    });

    it.sequential('stops sending and exits 77 with one line when the credentials are refused in the middle of a batch', async () => {
      const { generateBatch } = await import('../../bench/generate-batch.js');
      // In front of the sandbox: every create after the third is refused with 401, as when a key is revoked mid-run.
      const target = new URL(suite.sandbox.url);
      let creates = 0;
      const proxy = createServer((req, res) => {
        if (req.method === 'POST' && req.url?.endsWith('/transactions') && ++creates > 3) {
          req.resume();
          res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: ['key revoked'] }));
          return;
        }
        req.pipe(request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        }));
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      try {
        const home = join(dir, 'revoked');
        const env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}${target.pathname}`, PAYBATCH_API_KEY: suite.sandbox.apiKey, PAYBATCH_API_SECRET: suite.sandbox.apiSecret };
        // The workspace's folders, as a first command makes them (that command is tested above).
        openWorkspace(home);
        writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ intake: FAST_INTAKE, engine: { ...FAST_ENGINE, concurrency: 2 }, batch: { invalid_rows: 'skip_invalid' } }));
        await generateBatch(join(home, 'inbox', 'forty.csv'), 40);
        writeFileSync(join(home, 'inbox', 'forty.csv.done'), '');
        const result = await runCli(['run', '--wait', '5s'], { env });
        expect(result.code, result.stderr).toBe(77);
        expect(result.stderr).toMatch(/refused our credentials \(401: key revoked\)/);
        expect(result.stderr).not.toMatch(/\n\s+at /);
        // The refusal stops the sending: only a step already under way in the other slot may still have called.
        expect(creates).toBeGreaterThan(3);
        expect(creates).toBeLessThanOrEqual(3 + 2);
      } finally {
        proxy.close();
      }
    });

    it.sequential('run prints progress lines when not on a terminal; status lists the rows needing attention; report reconciles the batch', async () => {
      const home = join(dir, 'progress');
      const env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: suite.sandbox.url, PAYBATCH_API_KEY: suite.sandbox.apiKey, PAYBATCH_API_SECRET: suite.sandbox.apiSecret };
      // The workspace's folders, as a first command makes them (that command is tested above).
      openWorkspace(home);
      writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({
        intake: FAST_INTAKE, engine: FAST_ENGINE, batch: { invalid_rows: 'skip_invalid' }, reports: { service_ledger_url: `${suite.sandbox.operatorUrl}/ledger` },
      }));
      copyFileSync(template('demo-batch.csv'), join(home, 'inbox', 'demo.csv'));
      const run = await runCli(['run', '--wait', '3s', '--progress-every', '500ms'], { env });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/paybatch: progress B\d{8}-[0-9a-f]{8}: 16 rows to send: 16 sent, 16 funded, \d+ final; /);

      const status = await runCli(['status'], { env });
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toMatch(/ accepted {2}\(received [^)]+\)\n {2}4 rows in flight at the service, next read at \d\d:\d\d:\d\d \(the oldest for \d+s\)\n/);
      expect(status.stdout).toMatch(/needs attention: 4/);
      expect(status.stdout).toMatch(/line 14 {2}DEMO-013 {2}error {2}recipient_phone_number_invalid/);
      expect(status.stdout).toMatch(/line 16 {2}DEMO-015 {2}stuck {2}provider_timeout/);
      const json = JSON.parse((await runCli(['status', '--json'], { env })).stdout);
      expect(json.batches[0].attention.map((a: { state: string }) => a.state).sort()).toEqual(['error', 'exception', 'manual', 'stuck']);

      const batch = json.batches[0].batch as string;
      const report = await runCli(['report', '--batch', batch], { env });
      expect(report.code, report.stderr).toBe(0);
      expect(report.stdout).toMatch(/4 unsettled transactions read from the service; service ledger compared; 0 differences/);
      expect(readdirSync(join(home, 'outbox', 'reports')).sort()).toEqual(['checks', 'exceptions', 'movements', 'summary'].map((k) => `reconciliation-${batch}.${k}.csv`));
      const workbook = await runCli(['report', '--batch', batch, '--format', 'xlsx'], { env });
      expect(workbook.code, workbook.stderr).toBe(0);
      expect(workbook.stdout).toContain(`reconciliation-${batch}.xlsx`);
      const sheets = await readWorkbook(join(home, 'outbox', 'reports', `reconciliation-${batch}.xlsx`));
      expect([...sheets.keys()]).toEqual(['movements', 'summary', 'exceptions', 'checks', 'results']);
      expect(sheets.get('results')?.rows).toHaveLength(19); // the header and the demo batch's 18 lines
      const both = await runCli(['report', '--batch', batch, '--format', 'xlsx', '--spreadsheet'], { env });
      expect(both.code).toBe(64);
      expect(both.stderr).toMatch(/--spreadsheet shapes CSV files/);
      expect((await runCli(['report', '--date', '2026-02-30'], { env })).stderr).toMatch(/--date must be a calendar date/);
      expect((await runCli(['report'], { env })).code).toBe(64);
    }, 60_000);
  });
});
