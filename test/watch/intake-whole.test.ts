/**
 * A file is taken whole or not at all. A real child process writes a batch in
 * bursts, as a network share does, stalling at a row boundary and in the middle
 * of an amount for longer than the stability interval; the daemon (and `run`)
 * must never pay part of it, nor an amount cut short (987.65 paid as 98.00).
 * With a completion marker or a manifest, the stalls can be as long as they like.
 * A stall lasts until the test has seen the taker look at the file and moved the
 * taker's clock past what the stall is for: never a time slept.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import type { Clock } from '../../src/clock.js';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { DaemonContext } from '../helpers/daemon.js';
import { daemonContext, eventually } from '../helpers/daemon.js';
import type { EngineContext } from '../helpers/engine.js';
import { engineContext, template } from '../helpers/engine.js';

const STABLE_MS = 400;

/** A batch of `rows` GBR rows, the tenth paying 987.65 GBP; each row's external id is W-<n>. */
function batchText(rows: number): { text: string; amounts: Map<string, string> } {
  const [header, first] = readFileSync(template('templates/gbr-bank.csv'), 'utf8').split('\n') as [string, string];
  const fields = first.split(',');
  const amounts = new Map<string, string>();
  const lines = Array.from({ length: rows }, (_, i) => {
    const id = `W-${i + 1}`;
    const amount = i === 9 ? '987.65' : `${100 + i}.00`;
    amounts.set(id, amount.replace('.', ''));
    return [id, ...fields.slice(1, 4), amount, ...fields.slice(5)].join(',');
  });
  return { text: `${header}\n${lines.join('\n')}\n`, amounts };
}

/** A writer in a child process, stalled after each part until told to go on. */
interface Writer {
  /** Resolves once the writer has written its next part (or closed the file whole, with `stallWhole`) and stalls. */
  stalled(): Promise<void>;
  /** Lets the writer go on from its stall. */
  go(): void;
  /** Resolves once the file is whole, its companions written, and the writer gone. */
  done: Promise<void>;
}

/** Writers still running: a test that failed leaves its writer stalled, ended after it (stopWriters). */
const writers = new Set<ChildProcess>();

function stopWriters(): void {
  for (const writer of writers) writer.kill();
}

/**
 * Writes `parts` to `file` from a child process, as a network share does: after each part but the last, it says so on
 * its stdout and stalls until told to go on (on its stdin), however long that takes; then it closes the file, stalls
 * once more with `stallWhole`, and writes the companions it is given (a marker, a manifest). Its stdin closed during a
 * stall (the test's process gone), it ends there, writing nothing more.
 */
function slowWriter(file: string, parts: string[], options: { companions?: [path: string, text: string][]; stallWhole?: boolean } = {}): Writer {
  const script = `
    const fs = require('node:fs');
    const lines = require('node:readline').createInterface({ input: process.stdin });
    const told = lines[Symbol.asyncIterator]();
    const stall = async () => {
      process.stdout.write('stalled\\n');
      if ((await told.next()).done) process.exit(1);
    };
    const [file, parts, companions, stallWhole] = JSON.parse(process.env.WRITER);
    const fd = fs.openSync(file, 'w');
    (async () => {
      for (const [i, text] of parts.entries()) {
        fs.writeSync(fd, text);
        if (i < parts.length - 1) await stall();
      }
      fs.closeSync(fd);
      if (stallWhole) await stall();
      for (const [path, text] of companions) fs.writeFileSync(path, text);
      lines.close();
    })();`;
  const env = { ...process.env, WRITER: JSON.stringify([file, parts, options.companions ?? [], options.stallWhole === true]) };
  const child = spawn(process.execPath, ['-e', script], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  writers.add(child);
  const done = new Promise<void>((resolve, reject) => child.on('exit', (code) => {
    writers.delete(child);
    if (code === 0) resolve();
    else reject(new Error(`the writer exited ${code}`));
  }));
  // Awaited by the test when it gets that far; a writer ended after a failure is not a second one.
  done.catch(() => {});
  let heard = 0;
  let asked = 0;
  const listeners = new Set<() => void>();
  createInterface({ input: child.stdout }).on('line', () => {
    heard += 1;
    for (const listener of listeners) listener();
  });
  return {
    done,
    stalled() {
      const stall = (asked += 1);
      const reached = new Promise<void>((resolve) => {
        const check = (): void => {
          if (heard < stall) return;
          listeners.delete(check);
          resolve();
        };
        listeners.add(check);
        check();
      });
      return Promise.race([reached, done.then(() => Promise.reject(new Error(`the writer ended before its stall ${stall}`)))]);
    },
    go: () => void child.stdin.write('go\n'),
  };
}

/** The text cut into three parts: up to a row boundary, up to the middle of the 987.65 amount, the rest. */
function stalledParts(text: string): string[] {
  const boundary = text.indexOf('\n', Math.floor(text.length / 4)) + 1;
  const midAmount = text.indexOf('987.65') + 2;
  return [text.slice(0, boundary), text.slice(boundary, midAmount), text.slice(midAmount)];
}

/** The rows of the first part (up to the row boundary), its header aside. */
const rowsBeforeBoundary = (text: string): number => (stalledParts(text)[0] as string).split('\n').length - 2;

/**
 * The time of a daemon or a run whose file is written with stalls: it stands still from its making, moved on only by
 * the test (`advance`), so that a stall lasts, by the clock that judges it, what the test moved it on while the taker
 * looked, however slow the machine; once let go it is the system's time again, never behind where it stood.
 */
class HeldClock implements Clock {
  private held: number | null = Date.now();
  private ahead = 0;

  now(): number {
    return this.held ?? Date.now() + this.ahead;
  }

  advance(ms: number): void {
    if (this.held === null) throw new Error('the clock runs with the system\'s time now');
    this.held += ms;
  }

  letGo(): void {
    if (this.held === null) return;
    this.ahead = Math.max(0, this.held - Date.now());
    this.held = null;
  }
}

/** A look at a file of the inbox that left it waiting (intake_waiting in the audit trail): when, by the taker's clock, and why. */
interface Look { seq: number; at: number; reason: string }

/** The audit trail's entries of `action` on `subject` (a file's name) after `afterSeq`. */
async function entries(store: SqliteStore, action: string, subject: string, afterSeq: number): Promise<Look[]> {
  return (await store.auditEntries(afterSeq, 1_000_000)).filter((e) => e.action === action && e.subject === subject).map((e) => {
    const { reason } = JSON.parse(e.details) as { reason?: string };
    return { seq: e.seq, at: Date.parse(e.at), reason: reason ?? '' };
  });
}

/**
 * The `nth` look at `name` after `afterSeq` whose reason matches `why` and that was taken at `from` or later on the
 * taker's clock, once there is one (every look, the daemon's and a run's, is in the audit trail).
 */
async function look(store: SqliteStore, name: string, afterSeq: number, options: { nth?: number; why?: RegExp; from?: number } = {}): Promise<Look> {
  const { nth = 1, why = /./, from = 0 } = options;
  const what = `look ${nth} at ${name} after audit entry ${afterSeq}${from > 0 ? `, at ${new Date(from).toISOString()} or later` : ''}`;
  return eventually(async () => (await entries(store, 'intake_waiting', name, afterSeq)).filter((l) => why.test(l.reason) && l.at >= from)[nth - 1], 30_000, what);
}

/**
 * A stall that outlasts `ms` on the taker's clock while it looks: waits for a look at `name` that saw it as it stands
 * now (`fresh`: the first look after `afterSeq` when no look older than the stall can come after it, else the second:
 * a look under way at `afterSeq` may have seen the file before the stall, the next one started after), moves the
 * clock on by `ms`, and waits for a look taken `ms` or more after that one by the same clock: it found the file
 * unchanged for `ms` or more, and left it waiting. A held clock moves only when the test moves it, between looks: a
 * look's audit entry has the time it judged the file by.
 */
async function outlasted(store: SqliteStore, name: string, ms: number, advance: (ms: number) => void, options: { afterSeq: number; fresh: 1 | 2; why?: RegExp }): Promise<Look> {
  const seen = await look(store, name, options.afterSeq, { nth: options.fresh, why: options.why });
  advance(ms);
  return look(store, name, seen.seq, { why: options.why, from: seen.at + ms });
}

/** The audit trail's last entry now: what is after it happened after this. */
const mark = async (store: SqliteStore): Promise<number> => (await store.auditHead()).seq;

/** A last line cut short: the file is not taken before four stable intervals (workspace/arrival.ts). */
const CUT_SHORT = /does not end whole/;

/**
 * `stalls` stalls of the writer, each of four stable windows by the daemon's held clock and looked at again after them,
 * nothing taken meanwhile; then the file is written whole and the clock let go (a marker or a manifest required).
 */
async function nothingTakenThroughStalls(ctx: DaemonContext, writer: Writer, name: string, stalls: number, clock: HeldClock): Promise<void> {
  for (let stall = 1; stall <= stalls; stall++) {
    await writer.stalled();
    await outlasted(ctx.store, name, STABLE_MS * 4, (ms) => clock.advance(ms), { afterSeq: await mark(ctx.store), fresh: 2 });
    expect(await ctx.store.recentBatches('2000-01-01')).toEqual([]);
    writer.go();
  }
  await writer.done;
  clock.letGo();
}

/** The sandbox's transactions: external id to output amount in minor units. */
const paidAmounts = (sandbox: DaemonContext['sandbox']): Map<string, string> =>
  new Map([...sandbox.store.allTransactions()].map((t) => [t.external_id, t.output_amount]));

describe('a file taken whole or not at all', () => {
  let ctx: DaemonContext;
  afterEach(async () => {
    stopWriters();
    await ctx.stop();
  });

  // Bounds for a loaded machine: under two busy loops the whole file took more than 20 s to be paid (test:busy).
  it('stalls at a row boundary and mid-amount, longer than the stability interval: no part of the file is ever sent', { timeout: 90_000 }, async () => {
    // The daemon's time stands still while the writer stalls (a HeldClock), moved on by the test once the daemon has
    // looked: each stall outlasts the interval by the clock that judges it, under the daemon's eyes. Stalls of 600 real
    // ms raced the daemon's clock: the helper's manual clock, moved on by every pause of its loops, saw a last line cut
    // mid-field still for the four intervals it needs within them, took it cut short and refused it as unreadable,
    // nothing paid (e99fe4e); on the system's time, a busy machine could let the daemon look at neither stall, or let
    // the first outlast the second look, which then releases the part written.
    const clock = new HeldClock();
    ctx = await daemonContext({ config: { watch: { stable_ms: STABLE_MS } }, clock });
    const { text, amounts } = batchText(40);
    const writer = slowWriter(join(ctx.workspace.folders.inbox, 'slow.csv'), stalledParts(text));
    const advance = (ms: number): void => clock.advance(ms);

    // At a row boundary, 1.5 times the interval: a stability check alone is fooled, and takes the part written.
    await writer.stalled();
    await look(ctx.store, 'slow.csv', await mark(ctx.store), { nth: 2 });
    advance(STABLE_MS * 1.5);
    const early = await eventually(() => ctx.logs.find((l) => l.event === 'intake_accepted')?.fields.batch as string | undefined, 30_000, 'the part written taken');
    expect((await ctx.store.batch(early))?.rows_valid).toBe(rowsBeforeBoundary(text));
    // The watch after taking it is not fooled: it looks again once as long again has passed, and the writer has gone on
    // before that (the clock stands still until then).
    writer.go();
    await writer.stalled();
    advance(STABLE_MS);
    await eventually(() => ctx.logs.some((l) => l.event === 'intake_withdrawn' && l.fields.batch === early), 30_000, 'the part taken withdrawn');
    expect((await ctx.store.batch(early))?.status).toBe('rejected');

    // In the middle of an amount, 1.5 times the interval, the file back in the inbox: every look after the batch was
    // taken is at the file put back, cut short.
    const [accepted] = await entries(ctx.store, 'intake_accepted', 'slow.csv', 0);
    await outlasted(ctx.store, 'slow.csv', STABLE_MS * 1.5, advance, { afterSeq: accepted?.seq as number, fresh: 1, why: CUT_SHORT });
    writer.go();
    await writer.done;
    clock.letGo();

    await eventually(async () => (await ctx.store.recentBatches('2000-01-01')).some((b) => b.status === 'settled'), 60_000, 'the whole file paid');
    const batches = await ctx.store.recentBatches('2000-01-01');
    const settled = batches.filter((b) => b.status === 'settled');
    expect(settled).toHaveLength(1);
    expect(settled[0]?.rows_valid).toBe(40);
    // Every try at a part of the file ended with nothing of it sent.
    for (const other of batches.filter((b) => b.status !== 'settled')) expect(other.status).toBe('rejected');
    expect(paidAmounts(ctx.sandbox)).toEqual(amounts);
    expect(paidAmounts(ctx.sandbox).get('W-10')).toBe('98765');
    // The archived file is byte for byte the one written, and the one whose hash the batch records.
    const [archived] = readdirSync(ctx.workspace.folders.archive).filter((f) => f.endsWith('slow.csv'));
    expect(readFileSync(join(ctx.workspace.folders.archive, archived as string), 'utf8')).toBe(text);
    expect(settled[0]?.sha256).toBe(createHash('sha256').update(text).digest('hex'));
  });

  it('with intake.marker required, stalls of any length: nothing is taken before the marker', { timeout: 90_000 }, async () => {
    // The daemon's time stands still while the writer stalls (see the test above), and runs once the file is written.
    const clock = new HeldClock();
    ctx = await daemonContext({ config: { watch: { stable_ms: STABLE_MS }, intake: { marker: 'required' } }, clock });
    const { text, amounts } = batchText(30);
    const file = join(ctx.workspace.folders.inbox, 'marked.csv');
    const writer = slowWriter(file, stalledParts(text), { companions: [[`${file}.done`, '']], stallWhole: true });
    // Two stalls in the file and one once it is whole, its marker not yet written.
    await nothingTakenThroughStalls(ctx, writer, 'marked.csv', 3, clock);
    await eventually(async () => (await ctx.store.recentBatches('2000-01-01')).some((b) => b.status === 'settled'), 60_000, 'the marked file paid');
    expect(await ctx.store.recentBatches('2000-01-01')).toHaveLength(1);
    expect(paidAmounts(ctx.sandbox)).toEqual(amounts);
    // The marker went with its file: nothing is left in the inbox to say a later file of that name is complete.
    expect(readdirSync(ctx.workspace.folders.inbox)).toEqual([]);
    expect(readdirSync(ctx.workspace.folders.archive).some((f) => f.endsWith('marked.csv.done'))).toBe(true);
  });

  it('with a required manifest: the file matching its control totals is paid; one that does not is refused with both figures', { timeout: 90_000 }, async () => {
    const clock = new HeldClock();
    ctx = await daemonContext({ config: { watch: { stable_ms: STABLE_MS }, intake: { manifest: 'required' } }, clock });
    const { text, amounts } = batchText(20);
    const total = [...amounts.values()].reduce((sum, v) => sum + BigInt(v), 0n);
    const manifest = (rows: number, gbp: bigint) => JSON.stringify({ rows, totals: { GBP: `${gbp / 100n}.${String(gbp % 100n).padStart(2, '0')}` }, sha256: createHash('sha256').update(text).digest('hex') });
    const good = join(ctx.workspace.folders.inbox, 'good.csv');
    const writer = slowWriter(good, stalledParts(text), { companions: [[`${good}.manifest.json`, manifest(20, total)]] });
    // Two stalls in the file.
    await nothingTakenThroughStalls(ctx, writer, 'good.csv', 2, clock);
    await eventually(async () => (await ctx.store.recentBatches('2000-01-01')).some((b) => b.status === 'settled'), 60_000, 'the file with its manifest paid');
    expect(paidAmounts(ctx.sandbox)).toEqual(amounts);

    const bad = join(ctx.workspace.folders.inbox, 'bad.csv');
    const other = text.replaceAll('W-', 'V-');
    await slowWriter(bad, [other], { companions: [[`${bad}.manifest.json`, JSON.stringify({ rows: 21, totals: { GBP: '1.00' } })]] }).done;
    await eventually(() => readdirSync(ctx.workspace.folders.failed).some((f) => f.endsWith('bad.csv.report.txt')), 30_000, 'the mismatch refused');
    const report = readFileSync(join(ctx.workspace.folders.failed, readdirSync(ctx.workspace.folders.failed).find((f) => f.endsWith('bad.csv.report.txt')) as string), 'utf8');
    expect(report).toMatch(/rows: the manifest says 21, the file has 20/);
    expect(report).toMatch(/total in GBP: the manifest says 1\.00 GBP, the file has [\d,]+\.\d\d GBP/);
    expect([...paidAmounts(ctx.sandbox).keys()].some((id) => id.startsWith('V-'))).toBe(false);
  });
});

describe('paybatch run and a file still being written', () => {
  let ctx: EngineContext;
  afterEach(async () => {
    stopWriters();
    await ctx.stop();
  });

  it('never pays part of it: a run that took it too early puts it back, the next run pays it whole', { timeout: 90_000 }, async () => {
    // Whether the file stayed unchanged is judged against its times on disk, on the engine's clock: a HeldClock, which
    // stands still while the writer stalls and moves as the test moves it, not the helper's manual clock, which the
    // engine's waits move on. The runs look every 20 real ms meanwhile (the helper's waits), and --wait, on that clock,
    // is only a bound: the first run ends once it put the part back, the second once the file is paid.
    const clock = new HeldClock();
    ctx = await engineContext({}, { clock });
    const { text, amounts } = batchText(30);
    const writer = slowWriter(join(ctx.workspace.folders.inbox, 'slow.csv'), stalledParts(text));
    const config = { intake: { stable_ms: STABLE_MS } };

    // The first run takes the file at its row boundary, stalled 1.5 intervals (the run starts after the stall: its first
    // look sees the file as it stands); the writer goes on before the run's second look.
    await writer.stalled();
    const before = await mark(ctx.store);
    const first = ctx.run(config, 60_000);
    await look(ctx.store, 'slow.csv', before);
    clock.advance(STABLE_MS * 1.5);
    await eventually(() => ctx.events.some((e) => e.event === 'intake_accepted'), 30_000, 'the part written taken');
    writer.go();
    await writer.stalled();
    clock.advance(STABLE_MS);
    const early = (await first).intake.find((o) => o.kind === 'accepted');
    expect(early?.kind === 'accepted' ? early.ready : null).toBe(rowsBeforeBoundary(text));
    expect(ctx.events.find((e) => e.event === 'intake_withdrawn')?.fields.batch).toBe(early?.kind === 'accepted' ? early.batch : null);
    expect(readdirSync(ctx.workspace.folders.inbox)).toEqual(['slow.csv']);
    expect([...ctx.sandbox.store.allTransactions()]).toEqual([]);

    // The next run finds it cut mid-amount and leaves it, unchanged for 1.5 intervals; then it is whole, and paid whole.
    const again = await mark(ctx.store);
    const second = ctx.run(config, 60_000);
    await outlasted(ctx.store, 'slow.csv', STABLE_MS * 1.5, (ms) => clock.advance(ms), { afterSeq: again, fresh: 1, why: CUT_SHORT });
    writer.go();
    await writer.done;
    clock.letGo();
    const report = await second;
    expect(report.batches.find((b) => b.status === 'settled')?.rows).toBe(30);
    expect(new Map([...ctx.sandbox.store.allTransactions()].map((t) => [t.external_id, t.output_amount]))).toEqual(amounts);
  });
});
