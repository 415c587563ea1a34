/**
 * The console's reconciliation page in a real browser (Debian's Chromium
 * through playwright-core): a report the service could not fully check (it
 * offers no ledger) is shown amber, "incomplete: ledger not compared", never
 * green; written again with the ledger compared, it is "0 differences" in
 * green. Reports by the built binary against the sandbox over HTTP, pages by a
 * real `paybatch console` child process.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import { browserAvailable, launchChromium } from '../helpers/browser.js';
import { BIN, runCli } from '../helpers/cli.js';
import { FAST_ENGINE, FAST_INTAKE, FAST_SANDBOX, gbrRowsBatch } from '../helpers/engine.js';

const chromium = browserAvailable('the reconciliation page in a browser');
/** The console's colours (assets/console/console.css): --ok and --warn. */
const GREEN = 'rgb(20, 108, 46)';
const AMBER = 'rgb(138, 83, 0)';

describe.skipIf(!chromium)('the reconciliation page in a browser', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-reconciliation-page-'));
  const home = join(dir, 'ws');
  let sandbox: RunningSandbox;
  let browser: Browser;
  let env: Record<string, string>;
  const configure = (reports: Record<string, unknown>): void => writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({
    intake: FAST_INTAKE, engine: FAST_ENGINE, reports,
    console: { listen: { host: '127.0.0.1', port: 0 }, people: { vic: { role: 'viewer' } } },
  }));

  beforeAll(async () => {
    sandbox = await startSandbox({ config: FAST_SANDBOX });
    browser = await launchChromium(chromium as string);
    mkdirSync(join(home, 'inbox'), { recursive: true });
    env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: sandbox.url, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET: sandbox.apiSecret };
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await sandbox?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The verdict cell of the only report listed: its text, class and colour as drawn. */
  const verdictCell = async (page: Page): Promise<{ text: string; tone: string; color: string }> => {
    const cell = page.locator('table tbody tr').first().locator('td').nth(2).locator('span');
    return { text: await cell.innerText(), tone: (await cell.getAttribute('class')) ?? '', color: await cell.evaluate((element) => (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(element).color) };
  };

  it('shows a report whose ledger was not compared amber and incomplete, and a complete one green', { timeout: 90_000 }, async () => {
    configure({});
    gbrRowsBatch(join(home, 'inbox'), 'pay.csv', ['PAGE-0001']);
    const run = await runCli(['run', '--wait', '5s'], { env });
    expect(run.code, run.stderr).toBe(0);
    const today = new Date().toISOString().slice(0, 10);
    const incomplete = await runCli(['report', '--date', today], { env });
    expect(incomplete.code, incomplete.stderr).toBe(3);

    const served = spawn(process.execPath, [BIN, 'console', '--home', home, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
    let stderr = '';
    served.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      await expect.poll(() => /read-only\) at (http:\S+);/.exec(stderr)?.[1] ?? '', { timeout: 20_000 }).toMatch(/^http/);
      const url = (/read-only\) at (http:\S+);/.exec(stderr) as RegExpExecArray)[1] as string;
      const login = await runCli(['console', 'login', 'vic', '--home', home], { env });
      expect(login.code, login.stderr).toBe(0);
      const page = await browser.newPage();
      await page.goto(url);
      await page.getByLabel('Name').fill('vic');
      await page.getByLabel('One-time code').fill(login.stdout.trim());
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${url}/`);
      await page.getByRole('link', { name: 'Reconciliation' }).click();
      await page.waitForURL(`${url}/reconciliation`);
      expect(await verdictCell(page)).toEqual({ text: 'incomplete: ledger not compared', tone: 'warn', color: AMBER });

      // The same day written again with the service's ledger: every check ran, none found a difference.
      configure({ service_ledger_url: `${sandbox.operatorUrl}/ledger` });
      const complete = await runCli(['report', '--date', today], { env });
      expect(complete.code, complete.stderr).toBe(0);
      await page.reload();
      expect(await verdictCell(page)).toEqual({ text: '0 differences', tone: 'ok', color: GREEN });
    } finally {
      const closed = new Promise((resolve) => served.once('close', resolve));
      served.kill('SIGTERM');
      await closed;
    }
  });
});
