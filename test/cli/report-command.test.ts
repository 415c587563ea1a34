/**
 * `paybatch report` as a command (the built binary, a real child process)
 * against the sandbox over HTTP: its exit code is the reconciliation's verdict.
 * 0 for a complete report with 0 differences; 3 when the service offers no
 * ledger (incomplete: ledger not compared) or when a difference is unexplained.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { FAST_ENGINE, FAST_INTAKE, fastSandboxForSuite, gbrRowsBatch } from '../helpers/engine.js';

describe('paybatch report: the exit code is the verdict', () => {
  const suite = fastSandboxForSuite('paybatch-report-cli-');
  const { dir } = suite;

  it('exits 0 for a complete report with 0 differences, 3 when the ledger is not offered, 3 for an unexplained difference', { timeout: 60_000 }, async () => {
    const home = join(dir, 'ws');
    mkdirSync(join(home, 'inbox'), { recursive: true });
    const env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: suite.sandbox.url, PAYBATCH_API_KEY: suite.sandbox.apiKey, PAYBATCH_API_SECRET: suite.sandbox.apiSecret };
    const configure = (reports: Record<string, unknown>): void =>
      writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ intake: FAST_INTAKE, engine: FAST_ENGINE, reports }));
    configure({ service_ledger_url: `${suite.sandbox.operatorUrl}/ledger` });
    gbrRowsBatch(join(home, 'inbox'), 'pay.csv', ['RPT-0001', 'RPT-0002']);
    const run = await runCli(['run', '--wait', '5s'], { env });
    expect(run.code, run.stderr).toBe(0);
    const today = new Date().toISOString().slice(0, 10);

    const complete = await runCli(['report', '--date', today], { env });
    expect(complete.code, complete.stderr).toBe(0);
    expect(complete.stdout).toMatch(/service ledger compared; 0 differences\n/);

    // The same service, its ledger not configured: nothing says it offers one.
    configure({});
    const noLedger = await runCli(['report', '--date', today], { env });
    expect(noLedger.code, noLedger.stderr).toBe(3);
    expect(noLedger.stdout).toMatch(/service ledger not offered by the service; incomplete: ledger not compared\n/);
    expect(noLedger.stdout).toMatch(/NOT CHECKED: service ledger: not offered by the service/);
    expect(noLedger.stdout).not.toMatch(/; 0 differences/);
    expect(noLedger.stderr).toMatch(/reconciliation \d{4}-\d\d-\d\d: incomplete: ledger not compared: a person must look \(exit 3\)/);
    const json = await runCli(['report', '--date', today, '--format', 'json'], { env });
    expect(json.code).toBe(3);
    const document = JSON.parse(readFileSync(join(home, 'outbox', 'reports', `reconciliation-${today}.json`), 'utf8')) as { verdict: Record<string, unknown>; checks: { list: { check: string; ran: boolean; detail: string }[] } };
    expect(document.verdict).toMatchObject({ status: 'incomplete', complete: false, result: 'incomplete: ledger not compared', not_run: ['service_ledger'] });
    expect(document.checks.list.find((c) => c.check === 'service_ledger')).toEqual({ check: 'service_ledger', ran: false, detail: 'not offered by the service' });

    // A debit at the service for a transaction paybatch never created: an unexplained difference.
    configure({ service_ledger_url: `${suite.sandbox.operatorUrl}/ledger` });
    suite.sandbox.store.moveBalance(Date.now(), 'debit', 'USD', -1234n, 'tr_not_paybatchs');
    const differs = await runCli(['report', '--date', today], { env });
    expect(differs.code, differs.stderr).toBe(3);
    expect(differs.stdout).toMatch(/service ledger compared; 1 difference: 1 unexplained, 0 explained/);
    expect(differs.stderr).toMatch(/a person must look \(exit 3\)/);
  });
});
