/**
 * Every console page at 1280 px and at 390 px (a phone) in a real browser
 * (Debian's Chromium through playwright-core), against a real `paybatch watch`
 * on the embedded sandbox: no page is wider than the window, no table scrolls
 * sideways in its own box, and on Attention the row's amount, the advice and
 * the Cancel button are on screen. Screenshots of each page at each width are
 * kept under test-results/screenshots/.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, launchChromium } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import type { ConsoleSite } from '../helpers/console-site.js';
import { demoLines, startConsoleSite } from '../helpers/console-site.js';

const chromium = browserAvailable('the console at phone and desktop widths');
const SHOTS = fileURLToPath(new URL('../../test-results/screenshots/', import.meta.url));
const WIDTHS = [1280, 390] as const;

/** How far the page, and the widest table box, stick out sideways (0 or less: nothing does). */
async function overflow(page: Page): Promise<{ page: number; table: number }> {
  return page.evaluate<{ page: number; table: number }>(`({
    page: document.documentElement.scrollWidth - window.innerWidth,
    table: Math.max(0, ...[...document.querySelectorAll('.scroll')].map((box) => box.scrollWidth - box.clientWidth)),
  })`);
}

/** Whether an element is drawn, whole, inside the window's width. */
async function onScreen(locator: Locator, width: number): Promise<boolean> {
  if (!(await locator.isVisible())) return false;
  const box = await locator.boundingBox();
  return box !== null && box.width > 0 && box.x >= 0 && box.x + box.width <= width;
}

/** Loads `path` at each width: nothing wider than the window; a screenshot of each; `check` for more. */
async function atEachWidth(page: Page, url: string, name: string, check?: (width: number) => Promise<void>): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(url);
    const sticks = await overflow(page);
    expect(sticks.page, `${name} at ${width} px is ${sticks.page} px wider than the window`).toBeLessThanOrEqual(0);
    expect(sticks.table, `a table of ${name} at ${width} px scrolls ${sticks.table} px sideways`).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
    await check?.(width);
  }
}

describe.skipIf(!chromium)('the console at 1280 and 390 px', () => {
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

  it('no page is wider than the window; on Attention the amount, the advice and Cancel are on screen', { timeout: 240_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await atEachWidth(page, `${site.url}/login`, 'login');
    await page.getByLabel('Name').fill('olga');
    await page.getByLabel('One-time code').fill(await site.code('olga'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${site.url}/`);

    /** The batches awaiting approval, by the approvals page's links. */
    const awaiting = async (): Promise<string[]> => {
      await page.goto(`${site.url}/approvals`);
      const links = await page.getByRole('link', { name: 'Preview and decide' }).evaluateAll((as) => as.map((a) => (a as unknown as { pathname: string }).pathname));
      return links.map((p) => decodeURIComponent(p.replace('/approvals/', '')));
    };
    // One batch approved (its DEMO-014 row ends manual: a row for Attention), one left awaiting approval.
    site.drop('paid.csv', demoLines(['DEMO-001', 'DEMO-003', 'DEMO-014']));
    await expect.poll(async () => (await awaiting()).length, { timeout: 30_000 }).toBe(1);
    const [paid] = await awaiting() as [string];
    const approved = await runCli(['approve', paid, '--key', site.adaKey, '--as', 'ada', '--ceiling', 'USD=10000', '--ceiling', 'EUR=10000', '--home', site.home]);
    expect(approved.code, approved.stderr).toBe(0);
    site.drop('waiting.csv', demoLines(['DEMO-006', 'DEMO-007']));
    await expect.poll(async () => (await awaiting()).length, { timeout: 30_000 }).toBe(1);
    const [waiting] = await awaiting() as [string];
    expect(waiting).not.toBe(paid);
    await expect.poll(async () => {
      await page.goto(`${site.url}/attention`);
      return page.getByRole('link', { name: 'Cancel…' }).count();
    }, { timeout: 90_000 }).toBe(1);
    const today = new Date().toISOString().slice(0, 10);
    const report = await runCli(['report', '--date', today, '--home', site.home]);
    expect([0, 3], report.stderr).toContain(report.code);

    await atEachWidth(page, `${site.url}/`, 'batches');
    await atEachWidth(page, `${site.url}/batches/${encodeURIComponent(paid)}`, 'batch');
    await atEachWidth(page, `${site.url}/attention`, 'attention', async (width) => {
      const row = page.locator('tbody tr', { hasText: 'DEMO-014' });
      expect(await onScreen(row.locator('td').nth(4), width), `the amount at ${width} px`).toBe(true);
      expect(await row.locator('td').nth(4).innerText()).toMatch(/900\.00 NGN/);
      expect(await onScreen(row.locator('td').nth(6), width), `the advice at ${width} px`).toBe(true);
      expect(await onScreen(row.getByRole('link', { name: 'Cancel…' }), width), `the Cancel button at ${width} px`).toBe(true);
    });
    const cancel = await page.getByRole('link', { name: 'Cancel…' }).getAttribute('href') as string;
    await atEachWidth(page, `${site.url}${cancel.replaceAll('&amp;', '&')}`, 'cancel', async (width) => {
      expect(await onScreen(page.getByRole('button', { name: 'Yes, cancel this payout' }), width)).toBe(true);
    });
    await atEachWidth(page, `${site.url}/approvals`, 'approvals');
    await atEachWidth(page, `${site.url}/approvals/${encodeURIComponent(waiting)}`, 'approval');
    // What an approver sees there: the ceiling's form, the statement to sign and the signature's form.
    const approver = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await approver.goto(`${site.url}/login`);
    await approver.getByLabel('Name').fill('ada');
    await approver.getByLabel('One-time code').fill(await site.code('ada'));
    await approver.getByRole('button', { name: 'Sign in' }).click();
    await approver.waitForURL(`${site.url}/`);
    await atEachWidth(approver, `${site.url}/approvals/${encodeURIComponent(waiting)}`, 'approval-approver', async (width) => {
      expect(await onScreen(approver.locator('pre.statement'), width), `the statement at ${width} px`).toBe(true);
      expect(await onScreen(approver.getByRole('button', { name: 'Approve with this signature' }), width)).toBe(true);
    });
    await atEachWidth(page, `${site.url}/reconciliation`, 'reconciliation', async (width) => {
      const verdict = page.locator('tbody tr').first().locator('td').nth(2);
      expect(await onScreen(verdict, width), `the verdict at ${width} px`).toBe(true);
      expect(await verdict.innerText()).toMatch(/differences?|incomplete/);
    });
    await atEachWidth(page, `${site.url}/audit`, 'audit');
    await atEachWidth(page, `${site.url}/audit?batch=${encodeURIComponent(paid)}&action=state_learned`, 'audit-filtered', async () => {
      expect(await page.locator('tbody tr').count()).toBeGreaterThan(0);
      expect(await page.locator('.filter-shown').innerText()).toContain(`batch ${paid}`);
    });
  });
});
