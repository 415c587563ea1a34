import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { SteppedClock } from '../helpers/test-clock.js';
import { notificationFor } from '../../src/notify/events.js';
import { validBatchLines } from '../helpers/batch-lines.js';
import type { DaemonContext } from '../helpers/daemon.js';
import { daemonContext, eventually } from '../helpers/daemon.js';
import { debitsPerTransaction, template } from '../helpers/engine.js';
import { call, operator } from '../helpers/sandbox.js';

/** Polling so slow that within a test every state must come by webhook. */
const NO_POLLING = { engine: { polling: { first_window_ms: 3_600_000, first_window_reads: 6, later_interval_ms: 3_600_000, reads_per_second: 5 } } };

const allSettled = async (ctx: DaemonContext, batches: number): Promise<boolean> => {
  const rows = await ctx.store.recentBatches('2000-01-01');
  return rows.length === batches && rows.every((b) => b.status === 'settled');
};

describe('paybatch watch: the daemon', () => {
  let ctx: DaemonContext;
  afterEach(async () => ctx.stop());

  it('takes a file written slowly in chunks once, only after it is complete', async () => {
    ctx = await daemonContext({ config: { watch: { stable_ms: 400 } } });
    const { header, rows } = await validBatchLines(ctx.dir, 60);
    const file = join(ctx.workspace.folders.inbox, 'slow.csv');
    await writeFile(file, `${header}\n`);
    for (let i = 0; i < rows.length; i += 6) {
      await new Promise((r) => setTimeout(r, 100)); // each pause shorter than stable_ms: still being written
      await appendFile(file, `${rows.slice(i, i + 6).join('\n')}\n`);
    }
    await eventually(() => allSettled(ctx, 1), 20_000, 'the batch settled');
    const [batch] = await ctx.store.recentBatches('2000-01-01');
    expect(batch).toMatchObject({ file_name: 'slow.csv', rows_total: 60, rows_valid: 60 });
    expect(readdirSync(ctx.workspace.folders.failed)).toEqual([]);
  });

  it('takes NAME.csv.part only once renamed to NAME.csv, and leaves hidden and other files alone with one log line', async () => {
    ctx = await daemonContext();
    const inbox = ctx.workspace.folders.inbox;
    copyFileSync(template('templates/nga-cash.csv'), join(inbox, 'night.csv.part'));
    writeFileSync(join(inbox, '.hidden.csv'), 'x');
    writeFileSync(join(inbox, 'notes.txt'), 'hello');
    // Each looked at and ignored, with its line: the part file among them, so nothing of it was taken.
    await eventually(() => ctx.logs.filter((l) => l.event === 'inbox_file_ignored').length === 3, 5000, 'three files ignored');
    expect(await ctx.store.recentBatches('2000-01-01')).toEqual([]);
    renameSync(join(inbox, 'night.csv.part'), join(inbox, 'night.csv'));
    await eventually(() => allSettled(ctx, 1), 15_000, 'the renamed file paid');
    expect(readdirSync(inbox).sort()).toEqual(['.hidden.csv', 'notes.txt']);
    expect(ctx.logs.filter((l) => l.event === 'inbox_file_ignored')).toHaveLength(3);
  });

  // Bounds for a loaded machine: under two busy loops two hundred batches took more than 60 s to settle (test:busy).
  it('takes two hundred files dropped at once each exactly once, and pays each row once', { timeout: 240_000 }, async () => {
    ctx = await daemonContext();
    const { header, rows } = await validBatchLines(ctx.dir, 200);
    const staging = join(ctx.dir, 'staging');
    mkdirSync(staging);
    rows.forEach((row, i) => writeFileSync(join(staging, `f${String(i).padStart(3, '0')}.csv`), `${header}\n${row}\n`));
    for (const name of readdirSync(staging)) renameSync(join(staging, name), join(ctx.workspace.folders.inbox, name));
    await eventually(() => allSettled(ctx, 200), 180_000, 'two hundred batches settled');
    const batches = await ctx.store.recentBatches('2000-01-01');
    expect(new Set(batches.map((b) => b.file_name)).size).toBe(200);
    // Taken, none refused or taken twice; a file waited for until seen unchanged (intake_waiting) is not an outcome:
    // on the helper's manual clock, moved by the daemon's pauses, a file may be seen twice at the same time.
    expect(ctx.logs.filter((l) => l.event.startsWith('intake_') && l.event !== 'intake_accepted' && l.event !== 'intake_waiting')).toEqual([]);
    expect(readdirSync(ctx.workspace.folders.archive)).toHaveLength(200);
    expect(readdirSync(ctx.workspace.folders.failed)).toEqual([]);
    const debits = debitsPerTransaction(ctx.sandbox);
    expect(debits.size).toBe(200);
    expect([...debits.values()].every((n) => n === 1)).toBe(true);
  });

  it('learns states by webhook, not by polling, when deliveries arrive', async () => {
    ctx = await daemonContext({ config: NO_POLLING });
    copyFileSync(template('templates/gbr-bank.csv'), join(ctx.workspace.folders.inbox, 'gbr.csv'));
    await eventually(() => allSettled(ctx, 1), 15_000, 'the batch settled');
    const [batch] = await ctx.store.recentBatches('2000-01-01');
    expect(batch?.changes_by_polling).toBe(0);
    expect(batch?.changes_by_webhook).toBeGreaterThan(0);
  });

  it('recovers deliveries the service lost by polling', async () => {
    ctx = await daemonContext({ sandbox: { faults: { webhook_drop_rate: 1 } } });
    copyFileSync(template('templates/gbr-bank.csv'), join(ctx.workspace.folders.inbox, 'gbr.csv'));
    await eventually(() => allSettled(ctx, 1), 15_000, 'the batch settled');
    const [batch] = await ctx.store.recentBatches('2000-01-01');
    expect(batch?.changes_by_webhook).toBe(0);
    expect(batch?.changes_by_polling).toBeGreaterThan(0);
    expect((await ctx.store.webhookEventCounts()).received).toBe(0);
  });

  it('applies out-of-order events so that the newest state wins, and a forged event changes nothing', async () => {
    // Every delivery from the service dropped and no polling: the only events are the ones this test sends.
    ctx = await daemonContext({ sandbox: { faults: { webhook_drop_rate: 1 } }, config: NO_POLLING });
    copyFileSync(template('templates/nga-cash.csv'), join(ctx.workspace.folders.inbox, 'cash.csv'));
    const [row] = await eventually(async () => {
      const [batch] = await ctx.store.recentBatches('2000-01-01');
      const funded = batch ? await ctx.store.rowsInPhases(batch.id, ['funded'], 0, 1) : [];
      return funded.length > 0 ? funded : null;
    }, 10_000, 'a row funded');
    const id = row?.transaction_id as string;
    const paid = await eventually(async () => {
      const tx = (await call(ctx.sandbox, 'GET', `/transactions/${id}`)).body;
      return tx?.state === 'paid' ? tx : null;
    }, 10_000, 'the sandbox paid it');
    const event = (state: string, updatedAt: string) => JSON.stringify({ webhook_id: 'wh_t', event_type: `transaction.${state}`, data: { ...paid, state, updated_at: updatedAt } });
    const earlier = new Date(Date.parse(paid.updated_at) - 1000).toISOString();
    expect((await ctx.deliver(event('paid', paid.updated_at))).status).toBe(200);
    expect((await ctx.deliver(event('processing', earlier))).status).toBe(200);
    expect((await ctx.deliver(event('refunded', new Date(Date.parse(paid.updated_at) + 5000).toISOString()), { secret: 'forged' })).status).toBe(401);
    await eventually(async () => (await ctx.store.webhookEventCounts()).pending === 0 && (await ctx.store.webhookEventCounts()).received === 2, 5000, 'both applied');
    const after = await ctx.store.rowByTransaction(id);
    expect(after).toMatchObject({ phase: 'final', state: 'paid' });
    expect((await ctx.store.webhookEventCounts()).outcomes).toMatchObject({ applied: 1 });
  });

  it('holds a row whose webhook carries another amount, or another transaction under its external_id: never funded', async () => {
    ctx = await daemonContext({ sandbox: { kyc: { mode: 'review', verify_after_ms: 600_000, approve_after_ms: 600_000 } }, config: NO_POLLING });
    copyFileSync(template('templates/gbr-bank.csv'), join(ctx.workspace.folders.inbox, 'gbr.csv'));
    const rows = await eventually(async () => {
      const waiting = [...(await ctx.store.rowsWaitingOnSender('SND-0001')), ...(await ctx.store.rowsWaitingOnSender('SND-0002'))];
      return waiting.length === 2 ? waiting : null;
    }, 10_000, 'both rows created and waiting');
    const [first, second] = rows as [typeof rows[number], typeof rows[number]];
    const own = (await call(ctx.sandbox, 'GET', `/transactions/${first.transaction_id as string}`)).body;
    const later = new Date(Date.parse(own.updated_at) + 1000).toISOString();
    const scaled = { ...own, state: 'approved', updated_at: later, output_amount_in_cents: String(BigInt(own.output_amount_in_cents) * 100n) };
    expect((await ctx.deliver(JSON.stringify({ webhook_id: 'wh_t', event_type: 'transaction.approved', data: scaled }))).status).toBe(200);
    const stranger = { ...own, id: 'tr_stranger', external_id: second.external_id, state: 'approved', updated_at: later };
    expect((await ctx.deliver(JSON.stringify({ webhook_id: 'wh_t', event_type: 'transaction.approved', data: stranger }))).status).toBe(200);
    await eventually(async () => (await ctx.store.webhookEventCounts()).outcomes.mismatch === 2, 5000, 'both events decided');
    expect(await ctx.store.row(first.batch_id, first.line)).toMatchObject({ phase: 'held', outcome: 'answer_mismatch' });
    expect((await ctx.store.row(first.batch_id, first.line))?.outcome_detail).toMatch(/a webhook did not match the request: output_amount_in_cents asked 125000, answered 12500000/);
    expect((await ctx.store.row(second.batch_id, second.line))?.outcome_detail).toMatch(/a webhook did not match the request: id asked tr_\w+, answered tr_stranger/);
    expect(debitsPerTransaction(ctx.sandbox).size).toBe(0);
  });

  it('releases rows waiting on a KYC review when sender.approved arrives, and stops them on sender.rejected', async () => {
    // The release must come by a webhook, not by a read: on the system's time (a SteppedClock) reads stay where
    // NO_POLLING puts them, an hour away.
    ctx = await daemonContext({ sandbox: { kyc: { mode: 'review', verify_after_ms: 600_000, approve_after_ms: 600_000 } }, config: NO_POLLING, clock: new SteppedClock() });
    copyFileSync(template('templates/gbr-bank.csv'), join(ctx.workspace.folders.inbox, 'gbr.csv'));
    const waiting = async (sender: string) => (await ctx.store.rowsWaitingOnSender(sender)).length === 1;
    await eventually(async () => (await waiting('SND-0001')) && (await waiting('SND-0002')), 10_000, 'both rows waiting on their senders');
    expect((await operator(ctx.sandbox, 'PUT', '/senders/SND-0001/state', { state: 'approved' })).status).toBe(200);
    expect((await operator(ctx.sandbox, 'PUT', '/senders/SND-0002/state', { state: 'rejected' })).status).toBe(200);
    await eventually(() => allSettled(ctx, 1), 15_000, 'the batch settled');
    const [batch] = await ctx.store.recentBatches('2000-01-01');
    const rows: Record<string, string | null>[] = [];
    for await (const r of ctx.store.resultRows(batch?.id as string)) rows.push({ external_id: r.external_id, state: r.state, outcome: r.outcome });
    expect(rows).toEqual([
      { external_id: 'GBR-2026-0001', state: 'paid', outcome: null },
      { external_id: 'GBR-2026-0002', state: 'canceled', outcome: expect.stringMatching(/sender_rejected/) },
    ]);
    // The sandbox raises sender.approved and the transaction's own transaction.approved together, and the applier
    // applies events of different objects at once: whichever comes first releases the row (both are webhooks), and the
    // other finds it released. Reads cannot have done it: NO_POLLING puts the first an hour away on the system's time.
    const outcomes = (await ctx.store.webhookEventCounts()).outcomes;
    expect((outcomes.released ?? 0) + (outcomes.no_rows_waiting ?? 0)).toBe(1);
    expect(debitsPerTransaction(ctx.sandbox).size).toBe(1);
  });

  it('with an intake schedule, dropped files wait for its time (injected clock)', async () => {
    const clock = new ManualClock('2026-03-10T23:00:00Z');
    ctx = await daemonContext({ clock, config: { watch: { schedules: { intake: { cron: '0 2 * * *', time_zone: 'Europe/London' } } } } });
    // With its completion marker: the manual clock stands still, so stability could not be measured on it.
    copyFileSync(template('templates/nga-cash.csv'), join(ctx.workspace.folders.inbox, 'night.csv'));
    writeFileSync(join(ctx.workspace.folders.inbox, 'night.csv.done'), '');
    await eventually(() => ctx.logs.some((l) => l.event === 'intake_waiting'), 5000, 'the file seen');
    // The file's decision is that line: on the manual clock, nothing moves it before 02:00.
    expect(ctx.logs.find((l) => l.event === 'intake_waiting')?.fields.until).toBe('2026-03-11T02:00:00.000Z');
    expect(await ctx.store.recentBatches('2000-01-01')).toEqual([]);
    clock.advance(3 * 3_600_000);
    // Taken at 02:00, then looked at again (a marked file's second look) once the clock moves on, and paid.
    await eventually(async () => (await ctx.store.recentBatches('2000-01-01')).length === 1, 15_000, 'the file taken at 02:00');
    clock.advance(1_000);
    await eventually(() => allSettled(ctx, 1), 15_000, 'the file paid');
    expect(ctx.logs.some((l) => l.event === 'schedule_ran' && l.fields.schedule === 'intake')).toBe(true);
  });

  it('the reconcile schedule writes the day before\'s reconciliation (injected clock)', async () => {
    const clock = new ManualClock('2026-03-10T05:00:00Z');
    ctx = await daemonContext({ clock, config: { watch: { schedules: { reconcile: { cron: '0 6 * * *', time_zone: 'UTC' } } } } });
    const file = join(ctx.workspace.folders.outbox, 'reports', 'reconciliation-2026-03-09.summary.csv');
    // The manual clock stands before 06:00: nothing is due, so nothing is written.
    expect(existsSync(file)).toBe(false);
    clock.advance(3_600_000);
    // Said once every file of it is written: the summary exists a moment before (a CI run read the log in between).
    const said = await eventually(() => ctx.logs.find((l) => l.event === 'reconciliation_written'), 5000, 'the reconciliation written');
    expect(said.fields).toMatchObject({ date: '2026-03-09', differences: 0 });
    expect(readFileSync(file, 'utf8')).toContain('checks,differences,,,,0');
    // No ledger offered to this daemon: its verdict says so, and so does the notification made of it.
    expect(said.fields).toMatchObject({ verdict: 'incomplete: ledger not compared', complete: false, not_run: ['service_ledger'], unexplained: 0 });
    expect(notificationFor('reconciliation_written', said.fields)?.subject).toBe('Reconciliation for 2026-03-09: incomplete: ledger not compared');
  });
});

