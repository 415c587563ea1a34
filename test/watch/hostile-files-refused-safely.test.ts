/**
 * Hostile batch files through the watch daemon: each gets a clear error or a
 * safe result, the daemon keeps running, nothing outside the workspace is read
 * or written, and no file is lost.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import type { DaemonContext } from '../helpers/daemon.js';
import { daemonContext, eventually } from '../helpers/daemon.js';
import { template } from '../helpers/engine.js';

const corpus = (name: string): string => fileURLToPath(new URL(`../fixtures/hostile/${name}`, import.meta.url));
const STATIC = ['not-utf8.csv', 'binary.csv', 'nul-bytes.csv', 'unclosed-quote-at-end.csv', 'empty.csv', 'rtl-zero-width.csv', 'formula-injection.csv'];

/** The GBR template with its external ids changed, so that each copy is a new batch. */
function gbrCopy(prefix: string): string {
  return readFileSync(template('templates/gbr-bank.csv'), 'utf8').replace(/GBR-2026-/g, `${prefix}-`);
}

describe('hostile batch files, through the watch daemon', () => {
  let ctx: DaemonContext;
  let root: string;
  let outside: string;
  const intake = new Map<string, { event: string; fields: Record<string, unknown> }>();
  const names: string[] = [];

  beforeAll(async () => {
    ctx = await daemonContext({ config: { batch: { invalid_rows: 'skip_invalid' } } });
    root = ctx.dir;
    outside = join(root, 'outside');
    mkdirSync(outside);
    // A valid batch outside the workspace: read through a link, it would be paid.
    writeFileSync(join(outside, 'canary.csv'), gbrCopy('CANARY'));
    const inbox = ctx.workspace.folders.inbox;
    const drop = (name: string, write: (path: string) => void): void => {
      names.push(name);
      write(join(inbox, name));
    };
    for (const name of STATIC) drop(name, (path) => copyFileSync(corpus(name), path));
    drop('sparse-1gb.csv', (path) => {
      writeFileSync(path, '');
      truncateSync(path, 1_100_000_000); // looks like 1.1 GB; takes no disk
    });
    drop('one-10mb-field.csv', (path) => {
      const [header, row] = gbrCopy('BIG').split('\n') as [string, string];
      writeFileSync(path, `${header}\n${row.replace('Wilmslow', 'W'.repeat(10 * 1024 * 1024))}\n`);
    });
    drop('ten-thousand-columns.csv', (path) => writeFileSync(path, `${Array.from({ length: 10_000 }, (_, i) => `c${i}`).join(',')}\n${'x,'.repeat(9_999)}x\n`));
    drop('..\\..\\escape.csv', (path) => writeFileSync(path, gbrCopy('BSL')));
    drop('%2e%2e%2fescape.csv', (path) => writeFileSync(path, gbrCopy('PCT')));
    drop('link-to-outside.csv', (path) => symlinkSync(join(outside, 'canary.csv'), path));
    await eventually(() => {
      for (const log of ctx.logs) {
        if (!(log.event.startsWith('intake_') || log.event === 'inbox_file_ignored') || log.event === 'intake_waiting') continue;
        const file = String(log.fields.file ?? log.fields.name ?? '');
        const name = names.find((n) => file.endsWith(`--${n}`) || file.endsWith(`/${n}`) || file === n);
        if (name) intake.set(name, log);
      }
      return intake.size === names.length;
    }, 30_000, 'every file taken in').catch((error: Error) => {
      throw new Error(`${error.message}: missing ${names.filter((n) => !intake.has(n)).join(', ')}; logs ${JSON.stringify(ctx.logs.filter((l) => l.event.startsWith('intake') || l.event.startsWith('inbox')).map((l) => [l.event, l.fields.file ?? l.fields.name]))}`);
    });
  }, 60_000);
  afterAll(async () => ctx.stop());

  it('refuses each unreadable file with a report naming the file and, where there is one, the line; the file goes to failed/', () => {
    const failed = readdirSync(ctx.workspace.folders.failed);
    const reportOf = (name: string): string => {
      const report = failed.find((f) => f.endsWith(`--${name}.report.txt`));
      expect(report, `a report for ${name}`).toBeDefined();
      expect(failed.some((f) => f.endsWith(`--${name}`)), `${name} kept in failed/`).toBe(true);
      return readFileSync(join(ctx.workspace.folders.failed, report as string), 'utf8');
    };
    const expectations: [string, string, RegExp][] = [
      ['not-utf8.csv', 'intake_unreadable', /not-utf8\.csv, line 2: .*not_utf8/],
      ['binary.csv', 'intake_unreadable', /binary\.csv, line 1: .*binary/],
      ['nul-bytes.csv', 'intake_unreadable', /nul-bytes\.csv, line 3: .*binary/],
      ['unclosed-quote-at-end.csv', 'intake_unreadable', /unclosed-quote-at-end\.csv, line 3: .*quote/],
      ['empty.csv', 'intake_unreadable', /empty\.csv: .*empty/],
      ['one-10mb-field.csv', 'intake_unreadable', /one-10mb-field\.csv, line 2: .*row_too_large/],
      ['ten-thousand-columns.csv', 'intake_unreadable', /ten-thousand-columns\.csv, line 1: .*columns/],
      ['sparse-1gb.csv', 'intake_not_read', /sparse-1gb\.csv was not taken: it is 1100000000 bytes, over the limit/],
    ];
    for (const [name, event, report] of expectations) {
      expect(intake.get(name)?.event, name).toBe(event);
      expect(reportOf(name)).toMatch(report);
    }
  });

  it('does not follow a symbolic link out of the inbox: the target is neither read nor paid nor moved', async () => {
    expect(intake.get('link-to-outside.csv')?.event).toBe('intake_not_read');
    expect(readFileSync(join(outside, 'canary.csv'), 'utf8')).toBe(gbrCopy('CANARY'));
    expect(readdirSync(outside)).toEqual(['canary.csv']);
    expect(await ctx.store.rowBySubmittedExternalId('CANARY-0001')).toBeUndefined();
  });

  it('keeps names with ..\\ and %2e%2e%2f inside the workspace, and writes nothing outside it', async () => {
    // A name starting with a dot is a hidden file: left in the inbox, with one log line.
    expect(intake.get('..\\..\\escape.csv')).toMatchObject({ event: 'inbox_file_ignored', fields: { reason: 'a hidden file' } });
    expect(existsSync(join(ctx.workspace.folders.inbox, '..\\..\\escape.csv'))).toBe(true);
    expect(intake.get('%2e%2e%2fescape.csv')?.event).toBe('intake_accepted');
    expect(readdirSync(root).sort()).toEqual(['generated-60.csv', 'outside', 'ws'].filter((n) => existsSync(join(root, n))).sort());
    expect(readdirSync(join(root, '..')).some((n) => n.includes('escape'))).toBe(false);
  });

  it('rejects names with right-to-left overrides and zero-width characters, naming line and column', async () => {
    // Once seen failing here (not reproduced since): the daemon's whole log then says what came instead.
    expect(intake.get('rtl-zero-width.csv')?.event, JSON.stringify(ctx.logs.map((l) => [l.event, l.fields.file ?? l.fields.name ?? l.fields.batch ?? '']))).toBe('intake_accepted');
    const batch = intake.get('rtl-zero-width.csv')?.fields.batch as string;
    await eventually(() => existsSync(join(ctx.workspace.folders.outbox, `${batch}.results.csv`)), 10_000, 'results written');
    const rows = parse(readFileSync(join(ctx.workspace.folders.outbox, `${batch}.results.csv`)), { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => [r.line, r.state])).toEqual([['2', 'invalid'], ['3', 'invalid']]);
    expect(rows[0]?.error).toMatch(/recipient_first_name: invisible_character: .*U\+202E/);
    expect(rows[1]?.error).toMatch(/sender_first_name: invisible_character: .*U\+200B/);
  });

  it('never writes a cell a spreadsheet would run as a formula, whatever the input held', async () => {
    const batch = intake.get('formula-injection.csv')?.fields.batch as string;
    await eventually(() => existsSync(join(ctx.workspace.folders.outbox, `${batch}.results.csv`)), 10_000, 'results written');
    const cells = (parse(readFileSync(join(ctx.workspace.folders.outbox, `${batch}.results.csv`)), { relax_column_count: true }) as string[][]).flat();
    expect(cells.some((c) => c.includes('cmd|'))).toBe(true); // the input did reach the results...
    const dangerous = cells.filter((c) => /^[=+\-@]/.test(c) && !/^[+-]?\d+(\.\d+)?$/.test(c) && !/^\+[1-9]\d{6,14}$/.test(c));
    expect(dangerous).toEqual([]); // ...but never as a formula
  });

  it('keeps running: /healthz answers, and every file dropped is somewhere in the workspace', async () => {
    expect((await fetch(ctx.started.healthUrl)).status).toBe(200);
    const everywhere = [ctx.workspace.folders.processing, ctx.workspace.folders.archive, ctx.workspace.folders.failed].flatMap((folder) => readdirSync(folder));
    const inbox = readdirSync(ctx.workspace.folders.inbox);
    for (const name of names) expect(everywhere.some((f) => f.endsWith(`--${name}`)) || inbox.includes(name), name).toBe(true);
  });
});

describe('a file that disappears between being seen and being claimed', () => {
  it('is logged as gone, and the daemon carries on with the next file', async () => {
    const clock = new ManualClock('2026-03-10T23:00:00Z');
    const ctx = await daemonContext({ clock, config: { watch: { schedules: { intake: { cron: '0 2 * * *', time_zone: 'UTC' } } } } });
    try {
      const inbox = ctx.workspace.folders.inbox;
      // With completion markers: the manual clock stands still, so stability could not be measured on it.
      writeFileSync(join(inbox, 'vanishing.csv'), gbrCopy('VANISH'));
      writeFileSync(join(inbox, 'staying.csv'), gbrCopy('STAY'));
      writeFileSync(join(inbox, 'staying.csv.done'), '');
      await eventually(() => ctx.logs.filter((l) => l.event === 'intake_waiting').length === 2, 5000, 'both files seen');
      unlinkSync(join(inbox, 'vanishing.csv'));
      clock.advance(3 * 3_600_000);
      // Both, in whichever order the watcher reported the two files (they are taken one at a time, in that order).
      await eventually(() => ctx.logs.some((l) => l.event === 'intake_accepted'), 10_000, 'the other file taken');
      await eventually(() => ctx.logs.some((l) => l.event === 'intake_gone'), 10_000, 'the vanished file said');
      expect(ctx.logs.find((l) => l.event === 'intake_gone')?.fields).toMatchObject({ file: 'vanishing.csv' });
      expect((await fetch(ctx.started.healthUrl)).status).toBe(200);
    } finally {
      await ctx.stop();
    }
  });
});
