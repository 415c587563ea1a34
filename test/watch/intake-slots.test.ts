/**
 * The daemon's intake: one slow file never holds the others (files are taken a
 * few at once), and a file left cut short in the middle of a line is looked at
 * again as soon as it changes, not at the time its last look set (four
 * stability intervals ahead). In-process daemon, real sandbox over HTTP, real
 * SQLite file; waits are for events (a row, an audit entry), never for time.
 */
import { appendFileSync, copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { DaemonContext } from '../helpers/daemon.js';
import { daemonContext, eventually } from '../helpers/daemon.js';
import { template } from '../helpers/engine.js';

/** The file's intake outcomes in the audit trail (every look is one, a first one included), with their reasons. */
async function looks(ctx: DaemonContext, name: string): Promise<{ action: string; reason: string }[]> {
  const entries = await ctx.store.auditEntries(0, 10_000);
  return entries.filter((e) => e.subject === name && e.action.startsWith('intake_')).map((e) => ({ action: e.action, reason: String((JSON.parse(e.details) as { reason?: string }).reason ?? '') }));
}

const statusOf = async (ctx: DaemonContext, file: string): Promise<string | undefined> =>
  (await ctx.store.recentBatches('2000-01-01')).find((b) => b.file_name === file)?.status;

describe('the daemon takes files in', () => {
  let ctx: DaemonContext;
  afterEach(async () => ctx.stop());

  it('a complete file is taken while another is still being read (held in the middle of its intake)', { timeout: 60_000 }, async () => {
    // The slow file's rows are held on their way to the store, as a huge file or a slow share holds its reader.
    let release = (): void => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let slowBatch: string | null = null;
    const wrapStore = (store: SqliteStore): SqliteStore => new Proxy(store, {
      get(target, prop) {
        if (prop === 'beginBatch') {
          return async (input: Parameters<SqliteStore['beginBatch']>[0]) => {
            const id = await target.beginBatch(input);
            if (input.file_name === 'slow.csv') slowBatch = id;
            return id;
          };
        }
        if (prop === 'addRows') {
          return async (batch: string, rows: Parameters<SqliteStore['addRows']>[1]) => {
            if (batch === slowBatch) await held;
            return target.addRows(batch, rows);
          };
        }
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    ctx = await daemonContext({ wrapStore });
    const inbox = ctx.workspace.folders.inbox;
    copyFileSync(template('templates/gbr-bank.csv'), join(inbox, 'slow.csv'));
    writeFileSync(join(inbox, 'slow.csv.done'), '');
    await eventually(async () => (await statusOf(ctx, 'slow.csv')) === 'intake', 15_000, 'the slow file in intake');

    copyFileSync(template('templates/nga-cash.csv'), join(inbox, 'quick.csv'));
    writeFileSync(join(inbox, 'quick.csv.done'), '');
    await eventually(async () => (await statusOf(ctx, 'quick.csv')) === 'settled', 20_000, 'the quick file paid while the slow one is read');
    expect(await statusOf(ctx, 'slow.csv')).toBe('intake');

    release();
    await eventually(async () => (await statusOf(ctx, 'slow.csv')) === 'settled', 20_000, 'the slow file paid once read');
  });

  it('a file cut short in the middle of an amount, then completed, is looked at again when it changes', { timeout: 60_000 }, async () => {
    // A minute's stability: a file cut short would next be looked at four minutes later, were it not for the change.
    ctx = await daemonContext({ config: { watch: { stable_ms: 60_000 } } });
    const text = readFileSync(template('templates/gbr-bank.csv'), 'utf8');
    const cut = text.indexOf('1250.00') + 2;
    const file = join(ctx.workspace.folders.inbox, 'stall.csv');
    writeFileSync(file, text.slice(0, cut));
    await eventually(async () => (await looks(ctx, 'stall.csv')).length === 1, 15_000, 'the first look');
    expect((await looks(ctx, 'stall.csv'))[0]?.reason).toMatch(/does not end whole yet/);

    appendFileSync(file, text.slice(cut));
    const again = await eventually(async () => (await looks(ctx, 'stall.csv'))[1], 15_000, 'a look once it changed');
    expect(again).toEqual({ action: 'intake_waiting', reason: expect.stringMatching(/not taken until seen unchanged for 60 s/) });
    // Whole now: its marker, newer than its last change, takes it at once.
    writeFileSync(`${file}.done`, '');
    await eventually(async () => (await statusOf(ctx, 'stall.csv')) === 'settled', 20_000, 'the whole file paid');
    const paid = new Map([...ctx.sandbox.store.allTransactions()].map((t) => [t.external_id, t.output_amount]));
    expect(paid.get('GBR-2026-0001')).toBe('125000');
  });
});
