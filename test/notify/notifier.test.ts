/**
 * The notifier against real parts: a SQLite store file per test, local HTTP
 * receivers that verify the signed webhook [D3], a local SMTP server. Retries are
 * driven by a manual clock (a pass over the outbox at a time), or by a running
 * loop with millisecond backoffs; nothing sleeps for seconds.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.js';
import { ManualClock, systemClock } from '../../src/clock.js';
import { notificationsSchema } from '../../src/config/notifications.js';
import { ConfigError } from '../../src/errors.js';
import type { Channels } from '../../src/notify/channels/index.js';
import { openChannels } from '../../src/notify/channels/index.js';
import { Notifier, notifyingLog } from '../../src/notify/notifier.js';
import type { NotifierStore } from '../../src/notify/notifier.js';
import { startNotifications } from '../../src/notify/start.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { HttpReceiver, SmtpReceiver } from './receivers.js';
import { downUrl, startHttpReceiver, startSmtpReceiver, until } from './receivers.js';

const SECRET = 'webhook-signing-secret-0123456789';
const BATCH = 'B20260105-1a2b3c4d';
const ATTENTION = { batch: BATCH, line: 4, external_id: 'PAY-4', state: 'stuck', reason: 'provider_timeout: no answer from DE89370400440532013000' };

interface Logged { event: string; fields: Record<string, unknown> }

describe('the notifier', () => {
  let dir: string;
  let store: SqliteStore;
  let logs: Logged[];
  const opened: { notifier: Notifier; channels: Channels }[] = [];
  const receivers: { stop(): Promise<void> }[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'paybatch-notify-'));
    store = SqliteStore.open(join(dir, 'paybatch.db'));
    logs = [];
  });
  afterEach(async () => {
    for (const { notifier, channels } of opened.splice(0)) {
      await notifier.stop();
      await channels.close();
    }
    for (const receiver of receivers.splice(0)) await receiver.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const log = (event: string, fields: Record<string, unknown>): void => void logs.push({ event, fields });
  const logged = (event: string): Record<string, unknown>[] => logs.filter((l) => l.event === event).map((l) => l.fields);

  function notifierFor(config: unknown, options: { clock?: Clock; on?: NotifierStore; random?: () => number } = {}): Notifier {
    const parsed = notificationsSchema.parse(config);
    const channels = openChannels(parsed, dir);
    const notifier = new Notifier({ store: options.on ?? store, config: parsed, senders: channels.senders, clock: options.clock ?? systemClock, log, secrets: channels.secrets, random: options.random ?? (() => 1) });
    opened.push({ notifier, channels });
    return notifier;
  }
  async function http(options: Parameters<typeof startHttpReceiver>[0] = {}): Promise<HttpReceiver> {
    const receiver = await startHttpReceiver(options);
    receivers.push(receiver);
    return receiver;
  }
  async function smtp(login?: { user: string; password: string }): Promise<SmtpReceiver> {
    const receiver = await startSmtpReceiver(login);
    receivers.push(receiver);
    return receiver;
  }

  it('sends each channel its own spelling: a signed webhook a receiver verifies, a chat message, a mail', async () => {
    const hook = await http({ secret: SECRET });
    const chatToken = 'T0000/B0000/chat-token-secret';
    const chat = await http({ path: `/services/${chatToken}` });
    const mailServer = await smtp({ user: 'paybatch', password: 'smtp-password-from-file' });
    writeFileSync(join(dir, 'smtp.password'), 'smtp-password-from-file\n');
    writeFileSync(join(dir, 'hook.secret'), `${SECRET}\n`);
    const notifier = notifierFor({
      channels: {
        hook: { type: 'webhook', url: hook.url, key_id: 'ops-key', secret_file: 'hook.secret' },
        chat: { type: 'chat', url: chat.url, events: ['row_attention'] },
        mail: { type: 'email', smtp: { host: '127.0.0.1', port: mailServer.port, user: 'paybatch', password_file: 'smtp.password' }, from: 'paybatch <paybatch@example.com>', to: ['finance@example.com', 'ops@example.com'] },
      },
    });
    notifier.start();
    notifier.observe('row_attention', ATTENTION);
    notifier.observe('approval_requested', { batch: BATCH, file: 'payroll.csv' });
    await until(() => hook.deliveries.length === 2 && chat.deliveries.length === 1 && mailServer.mails.length === 2, 'every delivery');

    for (const delivery of hook.deliveries) {
      expect(delivery.signatureValid).toBe(true);
      expect(delivery.replayed).toBe(false);
      expect(delivery.headers['authorization-key']).toBe('ops-key');
      expect(delivery.headers['content-type']).toBe('application/json');
    }
    const attention = hook.deliveries.find((d) => d.body.event === 'row_attention');
    expect(attention?.body).toMatchObject({
      dedupe_key: `row_attention:${BATCH}:4:stuck`, attempt: 1, subject: `Row 4 of batch ${BATCH} needs a person: stuck`,
      data: { batch: BATCH, line: 4, external_id: 'PAY-4', state: 'stuck', reason: 'provider_timeout: no answer from DE89…3000' },
    });
    expect(Date.parse(attention?.body.occurred_at)).not.toBeNaN();

    // The chat channel is told only what it subscribed to, as Slack's {"text"}.
    expect(Object.keys(chat.deliveries[0]?.body)).toEqual(['text']);
    expect(chat.deliveries[0]?.body.text).toMatch(new RegExp(`^Row 4 of batch ${BATCH} needs a person: stuck\\n`));
    expect(chat.deliveries[0]?.headers['authorization-signature']).toBeUndefined();

    expect(mailServer.logins).toEqual(['paybatch:smtp-password-from-file', 'paybatch:smtp-password-from-file']);
    const mail = mailServer.mails.find((m) => m.header('x-paybatch-event') === 'approval_requested');
    expect(mail?.to).toEqual(['finance@example.com', 'ops@example.com']);
    expect(mail?.from).toBe('paybatch@example.com');
    expect(mail?.header('subject')).toBe(`paybatch: Batch ${BATCH} (payroll.csv) waits for approval`);
    expect(mail?.header('x-paybatch-dedupe-key')).toBe(`approval_requested:${BATCH}`);
    expect(mail?.text).toContain(`paybatch approve ${BATCH} --key FILE --as NAME`);

    await until(() => logged('notification_sent').length === 5, 'five sent lines');
    expect(await store.notificationCounts()).toEqual({ chat: { waiting: 0, delivered: 1, given_up: 0 }, hook: { waiting: 0, delivered: 2, given_up: 0 }, mail: { waiting: 0, delivered: 2, given_up: 0 } });
    // `event` is the log line's own name: a notification's is in `notification`.
    for (const line of logs) expect(line.fields).not.toHaveProperty('event');
    const everything = JSON.stringify(logs);
    for (const secret of [SECRET, 'smtp-password-from-file', chatToken, 'DE89370400440532013000']) expect(everything).not.toContain(secret);
  });

  it('retries a receiver that failed, with backoff, and delivers once', async () => {
    const clock = new ManualClock();
    const hook = await http({ secret: SECRET, answer: (n) => (n === 0 ? 500 : 200) });
    const notifier = notifierFor({ channels: { hook: { type: 'webhook', url: hook.url, secret: SECRET } }, retry: { base_ms: 1_000, cap_ms: 8_000, attempts: 5 } }, { clock });
    notifier.observe('row_attention', ATTENTION);
    await notifier.queued();
    expect(await notifier.deliverDue()).toBe(1);
    expect(logged('notification_failed')).toEqual([{ id: 1, channel: 'hook', notification: 'row_attention', dedupe_key: `row_attention:${BATCH}:4:stuck`, attempt: 1, error: 'answered HTTP 500', next_attempt_at: new Date(clock.now() + 1_000).toISOString() }]);
    // Not due before its backoff (up to base_ms for the first retry; the draw is fixed at its top here).
    clock.advance(999);
    expect(await notifier.deliverDue()).toBe(0);
    clock.advance(1);
    expect(await notifier.deliverDue()).toBe(1);
    expect(hook.requests).toBe(2);
    expect(hook.deliveries.map((d) => [d.body.attempt, d.signatureValid, d.replayed])).toEqual([[1, true, false], [2, true, false]]);
    expect(logged('notification_sent')).toEqual([{ id: 1, channel: 'hook', notification: 'row_attention', dedupe_key: `row_attention:${BATCH}:4:stuck`, attempt: 2 }]);
    clock.advance(60_000);
    expect(await notifier.deliverDue()).toBe(0);
    expect(await store.notificationCounts()).toEqual({ hook: { waiting: 0, delivered: 1, given_up: 0 } });
  });

  it('gives up on a receiver that is down after the configured attempts, each wait twice the last, capped', async () => {
    const clock = new ManualClock();
    const notifier = notifierFor({ channels: { down: { type: 'webhook', url: await downUrl(), secret: SECRET } }, retry: { base_ms: 1_000, cap_ms: 3_000, attempts: 4 } }, { clock });
    notifier.observe('balance_exhausted', { currency: 'USD', detail: 'insufficient funds', not_sent: 3 });
    await notifier.queued();
    const waits: number[] = [];
    for (let attempt = 1; attempt <= 4; attempt += 1) {
      expect(await notifier.deliverDue()).toBe(1);
      const failed = logged('notification_failed').at(-1);
      if (attempt < 4) {
        expect(failed).toMatchObject({ attempt, error: 'no answer: ECONNREFUSED' });
        waits.push(Date.parse(String(failed?.next_attempt_at)) - clock.now());
        clock.advance(waits.at(-1) as number);
      }
    }
    expect(waits).toEqual([1_000, 2_000, 3_000]);
    expect(logged('notification_given_up')).toEqual([{ id: 1, channel: 'down', notification: 'balance_exhausted', dedupe_key: expect.stringMatching(/^balance_exhausted:USD:/), attempts: 4, error: 'no answer: ECONNREFUSED' }]);
    clock.advance(3_600_000);
    expect(await notifier.deliverDue()).toBe(0);
    expect(await store.notificationCounts()).toEqual({ down: { waiting: 0, delivered: 0, given_up: 1 } });
  });

  it('never blocks: observing returns at once, a receiver that hangs or is down holds nobody else up, and stop is prompt', async () => {
    const hanging = await http({ answer: () => 'hang' });
    const good = await http({ secret: SECRET });
    const notifier = notifierFor({
      channels: {
        hanging: { type: 'chat', url: hanging.url, timeout_ms: 30_000 },
        down: { type: 'chat', url: await downUrl() },
        good: { type: 'webhook', url: good.url, secret: SECRET },
      },
      retry: { base_ms: 5, cap_ms: 20, attempts: 3 },
    });
    notifier.start();
    const started = performance.now();
    for (let line = 1; line <= 20; line += 1) notifier.observe('row_attention', { ...ATTENTION, line });
    expect(performance.now() - started).toBeLessThan(50);
    await until(() => good.deliveries.length === 20, 'the good channel told of all 20 rows');
    await until(() => logged('notification_given_up').filter((f) => f.channel === 'down').length === 20, 'the down channel given up');
    expect(hanging.requests).toBeGreaterThan(0);
    expect(logged('notification_sent').filter((f) => f.channel === 'hanging')).toEqual([]);

    // A stop cuts the hanging sends off within its grace; they wait in the outbox for the next start.
    const stopping = performance.now();
    await notifier.stop(100);
    expect(performance.now() - stopping).toBeLessThan(1_000);
    const interrupted = logged('notification_failed').filter((f) => f.channel === 'hanging');
    expect(interrupted.length).toBeGreaterThan(0);
    expect(interrupted[0]?.error).toBe('interrupted: paybatch is stopping');
    expect((await store.notificationCounts()).hanging).toEqual({ waiting: 20, delivered: 0, given_up: 0 });
    expect(logged('notification_given_up').filter((f) => f.channel === 'hanging')).toEqual([]);
  });

  it('queues the same fact once, however often and by however many workers it is observed, and sends it once', async () => {
    const hook = await http({ secret: SECRET });
    const config = { channels: { hook: { type: 'webhook', url: hook.url, secret: SECRET } } };
    const one = notifierFor(config);
    const two = notifierFor(config);
    for (const notifier of [one, two, one]) notifier.observe('approval_requested', { batch: BATCH, file: 'payroll.csv' });
    await Promise.all([one.queued(), two.queued()]);
    expect(logged('notification_queued')).toHaveLength(1);
    await Promise.all([one.deliverDue(), two.deliverDue(), one.deliverDue()]);
    expect(hook.deliveries).toHaveLength(1);
    expect(await store.notificationCounts()).toEqual({ hook: { waiting: 0, delivered: 1, given_up: 0 } });
  });

  it('gives up a notification whose channel is no longer configured, and one whose payload it cannot read', async () => {
    const hook = await http({ secret: SECRET });
    const notifier = notifierFor({ channels: { hook: { type: 'webhook', url: hook.url, secret: SECRET } } });
    await store.enqueueNotification({ channel: 'removed', event: 'batch_settled', dedupe_key: `batch_settled:${BATCH}`, payload: '{}', created_at: Date.now() - 1 });
    await store.enqueueNotification({ channel: 'hook', event: 'batch_settled', dedupe_key: 'garbled', payload: 'not json', created_at: Date.now() - 1 });
    expect(await notifier.deliverDue()).toBe(2);
    expect(logged('notification_given_up').map((f) => [f.channel, f.error])).toEqual([['removed', 'channel removed is no longer configured'], ['hook', 'its payload is not JSON']]);
    expect(hook.requests).toBe(0);
  });

  it('tells of a settled batch even when its counts cannot be read, and never throws into the engine when the outbox fails', async () => {
    const hook = await http({ secret: SECRET });
    const config = { channels: { hook: { type: 'webhook', url: hook.url, secret: SECRET } } };
    const failing = Object.create(store, {
      batch: { value: async () => { throw new Error('database is locked'); } },
    }) as NotifierStore;
    const notifier = notifierFor(config, { on: failing });
    notifier.observe('batch_settled', { batch: BATCH });
    await notifier.queued();
    expect(logged('notification_summary_unread')).toEqual([{ batch: BATCH, error: 'database is locked' }]);
    await notifier.deliverDue();
    expect(hook.deliveries[0]?.body).toMatchObject({ event: 'batch_settled', subject: `Batch ${BATCH} settled`, data: { batch: BATCH } });

    const down = Object.create(store, { enqueueNotification: { value: async () => { throw new Error('SQLITE_FULL: database or disk is full'); } } }) as NotifierStore;
    const engineLines: string[] = [];
    const wrapped = notifyingLog((event) => void engineLines.push(event), notifierFor(config, { on: down }));
    expect(() => wrapped('row_attention', ATTENTION)).not.toThrow();
    expect(engineLines).toEqual(['row_attention']);
    await until(() => logged('notification_not_queued').length === 1, 'the failure logged');
    expect(logged('notification_not_queued')).toEqual([{ notification: 'row_attention', error: 'SQLITE_FULL: database or disk is full' }]);
  });

  it('starts nothing when no channel is configured', () => {
    expect(startNotifications(notificationsSchema.parse({}), store, log, systemClock)).toBeNull();
  });

  it('refuses a secret file it cannot read, naming the channel and never the content', () => {
    const config = notificationsSchema.parse({ channels: { ops: { type: 'webhook', url: 'https://ops.example', secret_file: 'missing.secret' } } });
    expect(() => openChannels(config, dir)).toThrow(ConfigError);
    expect(() => openChannels(config, dir)).toThrow(/cannot read the secret file of notification channel ops .*missing\.secret: ENOENT/);
    writeFileSync(join(dir, 'empty.secret'), '\n');
    const empty = notificationsSchema.parse({ channels: { ops: { type: 'webhook', url: 'https://ops.example', secret_file: 'empty.secret' } } });
    expect(() => openChannels(empty, dir)).toThrow(/is empty/);
  });
});
