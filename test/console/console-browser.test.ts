/**
 * The operations console in a real browser (Debian's Chromium through
 * playwright-core), against a real `paybatch watch` on the embedded sandbox:
 * sign in with a one-time code, approve a batch awaiting approval with a
 * signature made by `paybatch keys sign`, watch it progress without reloading,
 * cancel its manual row from the attention page (another person, an operator),
 * see it settle, download its results; a screenshot of each page at 1280 and
 * 390 px wide is kept under test-results/console/.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, launchChromium } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import type { ConsoleSite } from '../helpers/console-site.js';
import { demoLines, startConsoleSite } from '../helpers/console-site.js';

const chromium = browserAvailable('the console\'s browser tests');
const SHOTS = fileURLToPath(new URL('../../test-results/console/', import.meta.url));
const WIDTHS = [1280, 390] as const;
/** Full account numbers and IBANs of the rows sent: never on a page. */
const ACCOUNTS = ['66374958', '88837491', 'DE89370400440532013000', 'DE89 3704 0044 0532 0130 00', '1234567755', '0123456785'];

/** Waits for a locator's text to contain `text` (the page may change under it: live updates). */
async function showsText(locator: Locator, text: string | RegExp, timeout = 15_000): Promise<void> {
  await expect.poll(async () => (await locator.count()) > 0 ? locator.first().innerText() : '', { timeout }).toMatch(typeof text === 'string' ? new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : text);
}

async function hasAttribute(locator: Locator, name: string, value: RegExp, timeout = 15_000): Promise<void> {
  await expect.poll(async () => (await locator.getAttribute(name)) ?? '', { timeout }).toMatch(value);
}

async function signIn(context: BrowserContext, site: ConsoleSite, name: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(site.url);
  expect(new URL(page.url()).pathname).toBe('/login');
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('One-time code').fill(await site.code(name));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${site.url}/`);
  return page;
}

/** A screenshot at each width; the page's text is checked for account numbers on the way. */
async function shoot(page: Page, name: string): Promise<void> {
  const html = await page.content();
  for (const account of ACCOUNTS) expect(html, `${name} shows ${account}`).not.toContain(account);
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    // At 390 px nothing may stick out sideways (tables are drawn as cards: console-narrow.test.ts checks every page).
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow, `${name} at ${width} px is ${overflow} px too wide`).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

describe.skipIf(!chromium)('the operations console in a browser', () => {
  let site: ConsoleSite;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    site = await startConsoleSite();
    browser = await launchChromium(chromium as string);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await site?.stop();
  });

  it('signs in, approves a batch, watches it progress live, cancels its manual row, sees it settle, downloads its results', { timeout: 180_000 }, async () => {
    const ada = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
    const login = await ada.newPage();
    await login.goto(site.url);
    await shoot(login, 'login');
    await login.close();
    const page = await signIn(ada, site, 'ada');
    await showsText(page.locator('h1'), /^Batches$/);

    // A batch waits for approval: nothing of it is sent before.
    site.drop('night.csv', demoLines(['DEMO-001', 'DEMO-002', 'DEMO-003', 'DEMO-004', 'DEMO-005', 'DEMO-006', 'DEMO-007', 'DEMO-008', 'DEMO-009', 'DEMO-014']));
    const link = page.locator('a', { hasText: /batch(es)? awaiting approval/ });
    await expect.poll(async () => { await page.reload(); return link.count(); }, { timeout: 30_000 }).toBe(1);
    await shoot(page, 'batches');
    await link.click();
    await showsText(page.locator('h1'), /^Approvals$/);
    await shoot(page, 'approvals');
    await page.getByRole('link', { name: 'Preview and decide' }).click();
    const batch = /\/approvals\/([^/?]+)/.exec(page.url())?.[1] as string;
    // Rows paid in GBP are funded in USD: no estimate, so the approver sets the USD ceiling.
    await page.getByLabel('USD').fill('5000.00');
    await page.getByRole('button', { name: 'Use this ceiling' }).click();
    await shoot(page, 'approval');
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Download the statement' }).click();
    const statementFile = join(site.dir, 'statement.json');
    await (await download).saveAs(statementFile);
    expect(JSON.parse(readFileSync(statementFile, 'utf8'))).toMatchObject({ batch, ceiling: { USD: '500000' } });
    const signed = await runCli(['keys', 'sign', '--key', site.adaKey, statementFile]);
    expect(signed.code, signed.stderr).toBe(0);
    await page.getByLabel('Signature').fill(signed.stdout.trim());
    await page.getByRole('button', { name: 'Approve with this signature' }).click();
    await showsText(page.locator('.notice.ok'), `Batch ${batch} is approved (ada)`);

    // The batch's page follows it without being reloaded.
    await page.getByRole('link', { name: 'Follow the batch' }).click();
    await hasAttribute(page.locator('body'), 'data-live-ready', /^yes$/, 10_000);
    await page.evaluate('window.marker = 1');
    await showsText(page.locator('[data-live-region]'), 'manual 1', 60_000);
    await hasAttribute(page.locator('body'), 'data-updated', /T/, 60_000);
    expect(await page.evaluate<number>('window.marker')).toBe(1);
    await shoot(page, 'batch');

    // Olga, an operator, cancels the manual row from the attention page, after confirming.
    const olga = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const operator = await signIn(olga, site, 'olga');
    await operator.getByRole('link', { name: 'Attention' }).click();
    await showsText(operator.locator('table'), 'DEMO-014');
    await shoot(operator, 'attention');
    await operator.getByRole('link', { name: 'Cancel…' }).click();
    await showsText(operator.locator('h1'), /^Cancel a payout$/);
    await shoot(operator, 'cancel');
    await operator.getByRole('button', { name: 'Yes, cancel this payout' }).click();
    await showsText(operator.locator('.notice.ok'), 'the service was asked to cancel it');

    // Ada's page, never reloaded, sees the batch settle.
    await showsText(page.locator('[data-live-region]'), 'settled', 90_000);
    expect(await page.evaluate<number>('window.marker')).toBe(1);
    const results = page.waitForEvent('download');
    await page.getByRole('link', { name: 'CSV', exact: true }).click();
    const resultsFile = join(site.dir, 'results.csv');
    await (await results).saveAs(resultsFile);
    const lines = readFileSync(resultsFile, 'utf8').trim().split(/\r?\n/);
    expect(lines[0]).toMatch(/^external_id,recipient_name,output_amount,output_currency,state,state_reason,final_at,line,transaction_id/);
    expect(lines).toHaveLength(11);
    expect(lines.find((l) => l.includes('DEMO-014'))).toMatch(/,(canceled|refunded),cancelled on request by olga \(it was manual: recipient_account_invalid\),/);
    expect(lines.filter((l) => /,paid,/.test(l)).length).toBeGreaterThanOrEqual(8);
    // The filter's choices are those of the page as loaded: load it again to choose among the final states.
    await page.reload();
    await page.getByLabel('State').selectOption('paid');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => page.locator('table tbody tr').count()).toBe(lines.filter((l) => /,paid,/.test(l)).length);

    // The day's reconciliation, written beside the daemon, and the audit trail. The daemon's embedded sandbox is the
    // workspace's own, its state in the workspace: the report's command asks the same one, and every check runs.
    const today = new Date().toISOString().slice(0, 10);
    const report = await runCli(['report', '--date', today, '--home', site.home]);
    expect(report.code, report.stderr).toBe(0);
    await page.getByRole('link', { name: 'Reconciliation' }).click();
    await showsText(page.locator('table span.ok'), /^0 differences$/);
    await shoot(page, 'reconciliation');
    await page.getByRole('link', { name: 'Audit' }).click();
    await showsText(page.locator('.notice.ok'), 'verifies');
    await showsText(page.locator('table'), 'approved');
    await shoot(page, 'audit');
    writeFileSync(join(SHOTS, 'README.txt'), 'Screenshots of the console taken by test/console/console-browser.test.ts, at 1280 and 390 px wide.\n');
  });
});
