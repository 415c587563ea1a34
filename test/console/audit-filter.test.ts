/**
 * The console's audit page, filtered by action and by batch: the filter is the
 * page's query (server-side), shown in the page, kept by its links (the older
 * entries), and what it lets through is the entries of that action about that
 * batch (its rows, its approval, its preview, the file taken in as it). A
 * console in process over real HTTP, on a real SQLite file.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/config.js';
import { issueCode } from '../../src/console/auth.js';
import type { ConsoleServer } from '../../src/console/server.js';
import { startConsole } from '../../src/console/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { Visitor } from '../helpers/console-visitor.js';

const AT = '2026-03-02T09:00:00.000Z';

/** The entries' numbers of a page, newest first. */
const seqs = (html: string): number[] => [...html.matchAll(/<tr role="row"><td role="cell" data-label="#">(\d+)<\/td>/g)].map((m) => Number(m[1]));

describe('the audit page filtered by action and batch', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-audit-filter-'));
  const home = join(dir, 'ws');
  let store: SqliteStore;
  let server: ConsoleServer;
  let vic: Visitor;
  const clock = new ManualClock(Date.parse(AT));

  beforeAll(async () => {
    const workspace = openWorkspace(home);
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ console: { people: { vic: { role: 'viewer' } } } }));
    const config = loadConfig({ home, env: {} });
    store = SqliteStore.open(workspace.database);
    const add = (action: string, subject: string, details: Record<string, unknown> = {}): Promise<void> => store.appendAudit({ at: AT, actor: 'paybatch', action, subject, details });
    await add('intake_accepted', 'pay.csv', { batch: 'B-1', rows: 3 }); // 1
    await add('intake_accepted', 'other.csv', { batch: 'B-10', rows: 1 }); // 2
    await add('approved', 'B-1'); // 3
    await add('preview', 'batch B-1 (pay.csv)'); // 4
    for (let line = 2; line <= 4; line += 1) {
      await add('create_requested', `B-1 line ${line}`); // 5, 7, 9
      await add('state_learned', `B-1 line ${line}`, { state: 'paid' }); // 6, 8, 10
    }
    await add('state_learned', 'B-10 line 2', { state: 'paid' }); // 11
    await add('console_code_issued', 'vic', { note: 'B-1' }); // 12: names the batch, but is not about it
    server = await startConsole({ store, config, clock, workspace, log: () => {}, actions: null }, { host: '127.0.0.1', port: 0 });
    vic = new Visitor(server.url);
    const { code } = await issueCode(store, 'vic', clock, 60_000);
    expect((await vic.signIn('vic', code)).status).toBe(303);
  }, 30_000);

  afterAll(async () => {
    await server?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('with no filter, shows every entry and offers each action with its count', async () => {
    const page = await vic.request('/audit');
    expect(page.status).toBe(200);
    // 13: vic's sign-in.
    expect(seqs(page.text)).toEqual([13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    expect(page.text).toContain('<option value="state_learned">state_learned (4)</option>');
    expect(page.text).toContain('<option value="intake_accepted">intake_accepted (2)</option>');
    expect(page.text).toMatch(/All \d+ entries, newest first/);
  });

  it('by batch: its rows, its approval, its preview and the file taken in as it; not another batch whose id begins the same', async () => {
    const page = await vic.request('/audit?batch=B-1');
    expect(seqs(page.text)).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 1]);
    expect(page.text).toContain('9 of');
    expect(page.text).toContain('with batch <code>B-1</code>');
    expect(page.text).toContain('<input name="batch" value="B-1"');
    expect(page.text).toContain('<a href="/audit">Show all</a>');
  });

  it('by action and batch together, the action chosen in the form', async () => {
    const page = await vic.request('/audit?action=state_learned&batch=B-1');
    expect(seqs(page.text)).toEqual([10, 8, 6]);
    expect(page.text).toContain('with action <code>state_learned</code> and batch <code>B-1</code>');
    expect(page.text).toContain('<option value="state_learned" selected>state_learned (4)</option>');
    expect(seqs((await vic.request('/audit?action=state_learned')).text)).toEqual([11, 10, 8, 6]);
  });

  it('pages through older entries keeping the filter', async () => {
    const page = await vic.request('/audit?action=state_learned&batch=B-1&before=8');
    expect(seqs(page.text)).toEqual([6]);
    expect(page.text).not.toContain('Older 100');
    // 101 more entries of the batch: the first page shows 100, and its link to the older ones keeps the filter.
    for (let i = 0; i < 101; i += 1) await store.appendAudit({ at: AT, actor: 'paybatch', action: 'state_learned', subject: 'B-1 line 9', details: { state: 'manual' } });
    await store.appendAudit({ at: AT, actor: 'paybatch', action: 'state_learned', subject: 'B-10 line 9', details: { state: 'manual' } });
    const first = await vic.request('/audit?action=state_learned&batch=B-1');
    expect(seqs(first.text)).toHaveLength(100);
    const older = /<a href="\/audit\?([^"]+)">Older 100<\/a>/.exec(first.text)?.[1] as string;
    const params = new URLSearchParams(older.replaceAll('&amp;', '&'));
    expect(Object.fromEntries(params)).toEqual({ action: 'state_learned', batch: 'B-1', before: String(Math.min(...seqs(first.text))) });
    const second = await vic.request(`/audit?${params.toString()}`);
    expect(seqs(second.text)).toEqual([14, 10, 8, 6]);
    expect(second.text).not.toContain('Older 100');
  });

  it('an action no entry has shows nothing, and says so', async () => {
    const page = await vic.request('/audit?action=no_such_action');
    expect(seqs(page.text)).toEqual([]);
    expect(page.text).toContain('0 of');
    expect(page.text).toContain('Nothing here.');
  });
});
