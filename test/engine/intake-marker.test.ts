/**
 * What a completion marker proves, on a manual clock with real files and a real
 * store: it counts only when it is at least as new as the file's last change and
 * the file ends whole; a marker goes wherever its file goes, failed/ included;
 * a file whose name holds a control character is refused, unread.
 */
import { appendFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import type { IntakeDeps } from '../../src/engine/intake.js';
import { takeFile } from '../../src/engine/intake.js';
import type { Seen } from '../../src/workspace/arrival.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Workspace } from '../../src/workspace/workspace.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { template } from '../helpers/engine.js';

const [HEADER, FIRST] = readFileSync(template('templates/gbr-bank.csv'), 'utf8').split('\n') as [string, string];
/** A GBR row of the template, with its own external id and amount. */
const row = (id: string, amount: string): string => {
  const fields = FIRST.split(',');
  return [id, ...fields.slice(1, 4), amount, ...fields.slice(5)].join(',');
};

describe('completion markers', () => {
  let dir: string;
  let workspace: Workspace;
  let store: SqliteStore;
  let deps: IntakeDeps;
  const clock = new ManualClock('2026-11-23T10:00:00.000Z');
  const config = configSchema.parse({ intake: { stable_ms: 10_000 } });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'paybatch-marker-'));
    workspace = openWorkspace(join(dir, 'ws'));
    store = SqliteStore.open(workspace.database);
    deps = { workspace, store, batch: config.batch, intake: config.intake, policy: 'reject_file', clock };
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const inbox = (name: string): string => join(workspace.folders.inbox, name);
  it('a marker beside a file cut short in the middle of an amount does not make it complete; once whole, the marker (now older) is ignored and the file taken by stability', async () => {
    const whole = `${HEADER}\n${row('M-1', '10.00')}\n${row('M-2', '987.65')}\n`;
    const cut = whole.indexOf('987.65') + 2;
    writeFileSync(inbox('cut.csv'), whole.slice(0, cut));
    writeFileSync(inbox('cut.csv.done'), '');
    const first = await takeFile(inbox('cut.csv'), deps);
    expect(first).toMatchObject({ kind: 'waiting', reason: expect.stringMatching(/does not end whole yet.*marker or manifest is there/) });
    // The writer goes on: the rest of the amount, and the row's other fields.
    clock.advance(1_000);
    appendFileSync(inbox('cut.csv'), whole.slice(cut));
    utimesSync(inbox('cut.csv.done'), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const second = await takeFile(inbox('cut.csv'), deps, (first as { seen: Seen }).seen);
    expect(second).toMatchObject({ kind: 'waiting', reason: expect.stringMatching(/its marker is older than the file, and ignored/) });
    clock.advance(10_000);
    const taken = await takeFile(inbox('cut.csv'), deps, (second as { seen: Seen }).seen);
    expect(taken.kind).toBe('accepted');
    const batch = (taken as { batch: string }).batch;
    expect((await store.batch(batch))?.rows_valid).toBe(2);
    expect(readdirSync(workspace.folders.inbox)).toEqual([]);
  });

  it('a marker older than the file (written before it) is ignored: not taken at the first look, taken whole by stability', async () => {
    writeFileSync(inbox('early.csv.done'), '');
    writeFileSync(inbox('early.csv'), `${HEADER}\n${row('E-1', '10.00')}\n`);
    const past = new Date(Date.now() - 60_000);
    utimesSync(inbox('early.csv.done'), past, past);
    const first = await takeFile(inbox('early.csv'), deps);
    expect(first.kind).toBe('waiting');
    appendFileSync(inbox('early.csv'), `${row('E-2', '20.00')}\n`);
    const second = await takeFile(inbox('early.csv'), deps, (first as { seen: Seen }).seen);
    expect(second.kind).toBe('waiting');
    clock.advance(10_000);
    const taken = await takeFile(inbox('early.csv'), deps, (second as { seen: Seen }).seen);
    expect(taken.kind).toBe('accepted');
    expect((await store.batch((taken as { batch: string }).batch))?.rows_valid).toBe(2);
    // The stale marker went with its file: nothing in the inbox says a later early.csv is complete.
    expect(readdirSync(workspace.folders.inbox)).toEqual([]);
  });

  it('an empty file beside a marker (created just after it, within the same tick) is not complete by the marker', async () => {
    writeFileSync(inbox('blank.csv.done'), '');
    writeFileSync(inbox('blank.csv'), '');
    const now = new Date();
    utimesSync(inbox('blank.csv'), now, now);
    utimesSync(inbox('blank.csv.done'), now, now);
    expect((await takeFile(inbox('blank.csv'), deps)).kind).toBe('waiting');
    appendFileSync(inbox('blank.csv'), `${HEADER}\n${row('B-1', '10.00')}\n`);
    writeFileSync(inbox('blank.csv.done'), '');
    expect((await takeFile(inbox('blank.csv'), deps)).kind).toBe('accepted');
  });

  it('with intake.marker required, a marker older than the file is waited past: the file waits for a new one', async () => {
    const required = configSchema.parse({ intake: { stable_ms: 10_000, marker: 'required' } });
    deps = { ...deps, intake: required.intake };
    writeFileSync(inbox('req.csv.done'), '');
    writeFileSync(inbox('req.csv'), `${HEADER}\n${row('R-1', '10.00')}\n`);
    const past = new Date(Date.now() - 60_000);
    utimesSync(inbox('req.csv.done'), past, past);
    clock.advance(100_000);
    expect(await takeFile(inbox('req.csv'), deps)).toMatchObject({ kind: 'waiting', reason: expect.stringMatching(/older than the file's last change/) });
    writeFileSync(inbox('req.csv.done'), '');
    expect((await takeFile(inbox('req.csv'), deps)).kind).toBe('accepted');
  });

  it('a marker goes to failed/ with a file refused unread (a link): none is left in the inbox to bless a later file', async () => {
    writeFileSync(join(dir, 'passwd'), 'root:x:0:0\n');
    symlinkSync(join(dir, 'passwd'), inbox('passwd.csv'));
    writeFileSync(inbox('passwd.csv.done'), '');
    expect((await takeFile(inbox('passwd.csv'), deps)).kind).toBe('not_read');
    expect(readdirSync(workspace.folders.inbox)).toEqual([]);
    expect(readdirSync(workspace.folders.failed).filter((f) => f.endsWith('passwd.csv.done'))).toHaveLength(1);
  });

  it('a file whose name holds a newline is refused unread, kept under an escaped name, its report naming it escaped', async () => {
    writeFileSync(inbox('pay\nroll.csv'), `${HEADER}\n${row('N-1', '10.00')}\n`);
    writeFileSync(inbox('pay\nroll.csv.done'), '');
    const outcome = await takeFile(inbox('pay\nroll.csv'), deps);
    expect(outcome).toMatchObject({ kind: 'not_read', reason: expect.stringContaining('"pay\\nroll.csv"') });
    expect(readdirSync(workspace.folders.inbox)).toEqual([]);
    const failed = readdirSync(workspace.folders.failed);
    expect(failed.some((f) => f.includes('\n'))).toBe(false);
    expect(failed.filter((f) => /--pay_roll\.csv(\.done|\.report\.txt)?$/.test(f))).toHaveLength(3);
    const report = readFileSync(join(workspace.folders.failed, failed.find((f) => f.endsWith('.report.txt')) as string), 'utf8');
    expect(report).toContain('pay\\nroll.csv');
    expect(await store.recentBatches('2000-01-01')).toEqual([]);
  });
});
