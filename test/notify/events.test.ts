/** Which log events become notifications, in what words, under which key; and how each channel spells them. Pure. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/config.js';
import { notificationsShown, notificationsSchema } from '../../src/config/notifications.js';
import type { NotificationRecord } from '../../src/store/port.js';
import type { BatchSummary } from '../../src/notify/events.js';
import { notificationEventOf, notificationFor } from '../../src/notify/events.js';
import { chatBody, emailContent, outgoingOf, payloadOf, webhookBody } from '../../src/notify/render.js';
import { subscribes } from '../../src/notify/config.js';

const BATCH = 'B20260105-1a2b3c4d';
const IBAN = 'DE89370400440532013000';
const ACCOUNT = '0123456789012';

const SUMMARY: BatchSummary = {
  file: 'payroll.csv', rows: 5, by_state: { error: 1, paid: 3, returned: 1 }, need_person: 1, paid_out: { EUR: '123456', NGN: '5000000' }, funded: { USD: '150000' },
};

/** Every notification a person may get, from the log events the engine writes (fields as the engine writes them). */
const FACTS: { event: string; fields: Record<string, unknown>; summary?: BatchSummary }[] = [
  { event: 'approval_requested', fields: { batch: BATCH, file: 'payroll.csv', preview: `paybatch preview ${BATCH}` } },
  { event: 'batch_settled', fields: { batch: BATCH }, summary: SUMMARY },
  { event: 'row_attention', fields: { batch: BATCH, line: 7, external_id: 'PAY-7', state: 'error', reason: `recipient_account_invalid: account ${IBAN} / ${ACCOUNT} is closed` } },
  { event: 'balance_exhausted', fields: { currency: 'USD', detail: `funding refused for account ${ACCOUNT}: insufficient funds`, not_sent: 12 } },
  { event: 'intake_rejected', fields: { batch: BATCH, file: '/ws/failed/2026-01-05T09-00-00-000Z--payroll.csv', reason: '3 invalid rows (batch.invalid_rows reject_file)', report: '/ws/failed/2026-01-05T09-00-00-000Z--payroll.csv.report.txt' } },
  { event: 'reconciliation_written', fields: { date: '2026-01-04', verdict: '2 differences: 2 unexplained, 0 explained (paybatch behind the service)', complete: true, not_run: [], differences: 2, unexplained: 2, files: 3 } },
  { event: 'archived_file_changed', fields: { batch: BATCH, file: 'payroll.csv', sha256_validated: 'a'.repeat(64), sha256_now: 'b'.repeat(64), held: '/ws/archive/2026-01-05T09-00-00-000Z--payroll.csv.unsent.csv', lines_held: 5 } },
];

const everything = (n: object): string => JSON.stringify(n);

describe('notifications from log events', () => {
  it('makes one notification of each kind, with a dedupe key naming the fact', () => {
    const made = FACTS.map((f) => notificationFor(f.event, f.fields, f.summary ?? null));
    expect(made.map((n) => [n?.event, n?.dedupe_key])).toEqual([
      ['approval_requested', `approval_requested:${BATCH}`],
      ['batch_settled', `batch_settled:${BATCH}`],
      ['row_attention', `row_attention:${BATCH}:7:error`],
      ['balance_exhausted', expect.stringMatching(/^balance_exhausted:USD:[0-9a-f]{16}$/)],
      ['file_rejected', `file_rejected:${BATCH}`],
      ['reconciliation_differences', 'reconciliation_differences:2026-01-04'],
      ['file_changed', `file_changed:${BATCH}`],
    ]);
    // The same fact, seen again (by another worker), has the same key; another fact another one.
    for (const f of FACTS) expect(notificationFor(f.event, { ...f.fields }, f.summary ?? null)?.dedupe_key).toBe(notificationFor(f.event, f.fields, f.summary ?? null)?.dedupe_key);
    expect(notificationFor('row_attention', { ...FACTS[2]?.fields, state: 'stuck' })?.dedupe_key).toBe(`row_attention:${BATCH}:7:stuck`);
    expect(notificationFor('balance_exhausted', { currency: 'USD', detail: 'another funding refused' })?.dedupe_key).not.toBe(made[3]?.dedupe_key);
  });

  it('tells a person of a cancellation given up (sent three times, still cancellable at the service), as a fact of its own', () => {
    // The fields as steps.ts logs them.
    const fields = { batch: BATCH, line: 7, external_id: 'PAY-7', transaction: 'tr_7', state: 'error', outcome: 'cancelled_on_request', sends: 3, reason: 'paybatch sent its cancellation 3 times and the service still holds the transaction as cancellable: ask the service to cancel it or to say why not' };
    const n = notificationFor('cancel_given_up', fields);
    expect(n).toMatchObject({ event: 'row_attention', dedupe_key: `row_attention:${BATCH}:7:cancel_given_up`, subject: `Row 7 of batch ${BATCH} needs a person: its cancellation was not taken (error)` });
    expect(n?.text).toContain('sent its cancellation 3 times');
    // Not the same fact as the row needing a person in that state for another reason.
    expect(n?.dedupe_key).not.toBe(notificationFor('row_attention', FACTS[2]?.fields ?? {})?.dedupe_key);
    // Accepted by the service and not carried out: another fact, in other words.
    const undone = notificationFor('cancel_given_up', { ...fields, sends: 1, accepted_at: '2026-01-05T09:00:00.000Z' });
    expect(undone).toMatchObject({ dedupe_key: `row_attention:${BATCH}:7:cancel_not_carried_out`, subject: `Row 7 of batch ${BATCH} needs a person: its cancellation was not carried out (error)` });
    // The one that is sent again is not news.
    expect(notificationFor('cancel_sent_again', fields)).toBeNull();
  });

  it('says who may approve a batch waiting for approval: the stage\'s words, when run gave them', () => {
    const stage = 'awaiting approval by ada or grace: nothing is sent before it; the request expires 2026-01-06T09:00:00.000Z';
    const n = notificationFor('approval_requested', { batch: BATCH, file: 'payroll.csv', stage }, null);
    expect(n?.text).toBe(`Batch ${BATCH}: ${stage}.\nLook at it: paybatch preview ${BATCH}\nApprove it: paybatch approve ${BATCH} --key FILE --as NAME`);
    expect(n?.data).toMatchObject({ batch: BATCH, stage });
    expect(notificationFor('approval_requested', { batch: BATCH, file: 'payroll.csv' }, null)?.text).toMatch(/^Nothing of batch B\S+ is sent before it is approved\./);
  });

  it('says a settled batch with its counts and amounts in major units', () => {
    const n = notificationFor('batch_settled', { batch: BATCH }, SUMMARY);
    expect(n?.subject).toBe(`Batch ${BATCH} (payroll.csv) settled: 5 rows, 3 paid`);
    expect(n?.text).toBe(`5 rows: error 1, paid 3, returned 1.\nPaid out: 1,234.56 EUR, 50,000.00 NGN.\n1 row needs a person: paybatch status ${BATCH}`);
    expect(n?.data).toMatchObject({ batch: BATCH, rows: 5, by_state: { paid: 3 }, paid_out: { EUR: '123456' }, need_person: 1 });
    // Counts that could not be read: still told, and said so.
    expect(notificationFor('batch_settled', { batch: BATCH }, null)?.text).toMatch(/could not be read/);
  });

  it('never carries an account number, even when the service or a file quotes one', () => {
    for (const f of FACTS) {
      const n = notificationFor(f.event, f.fields, f.summary ?? null);
      expect(n).not.toBeNull();
      expect(everything(n as object)).not.toContain(IBAN);
      expect(everything(n as object)).not.toContain(ACCOUNT);
    }
    const n = notificationFor('row_attention', FACTS[2]?.fields ?? {});
    expect(n?.text).toContain('DE89…3000');
    expect(n?.text).toContain(BATCH); // a batch id's date is not taken for an account number
    const file = notificationFor('intake_not_read', { file: `/ws/failed/2026-01-05T09-00-00-000Z--${IBAN}.csv`, reason: 'it does not match its manifest' });
    expect(everything(file as object)).not.toContain(IBAN);
  });

  it('says each way a file is set aside as file_rejected, by its own name, nothing of it sent', () => {
    const rejected = notificationFor('intake_rejected', FACTS[4]?.fields ?? {});
    expect(rejected?.subject).toBe('File payroll.csv rejected: nothing of it was sent');
    expect(rejected?.text).toContain('3 invalid rows');
    expect(rejected?.data).toMatchObject({ file: 'payroll.csv', batch: BATCH, report: '2026-01-05T09-00-00-000Z--payroll.csv.report.txt' });
    expect(everything(rejected as object)).not.toContain('/ws/'); // no server paths
    const unreadable = notificationFor('intake_unreadable', { batch: BATCH, file: '/ws/failed/x.csv', reason: 'invalid_quote: line 3' });
    expect(unreadable?.subject).toBe('File x.csv unreadable: nothing of it was sent');
    const notRead = notificationFor('intake_not_read', { file: '/ws/failed/2026-01-05T09-00-00-000Z--y.csv', reason: 'no manifest' });
    expect(notRead?.dedupe_key).toBe('file_rejected:2026-01-05T09-00-00-000Z--y.csv');
    const duplicate = notificationFor('intake_duplicate', { file: '/ws/failed/2026-01-05T09-00-00-000Z--z.csv', note: '/ws/failed/2026-01-05T09-00-00-000Z--z.csv.duplicate.txt' });
    expect(duplicate?.subject).toBe('File z.csv a duplicate: nothing of it was sent');
    expect(duplicate?.text).toMatch(/same content was taken in before/);
  });

  it('tells nothing of events that are not news, or whose fields do not name the fact', () => {
    for (const event of ['intake_accepted', 'settled', 'notification_sent', 'intake_changed', 'toString', '__proto__']) expect(notificationEventOf(event)).toBeNull();
    expect(notificationFor('settled', { batch: BATCH })).toBeNull();
    expect(notificationFor('batch_settled', {})).toBeNull();
    expect(notificationFor('row_attention', { batch: BATCH, state: 'error' })).toBeNull();
    expect(notificationFor('reconciliation_written', { date: '2026-01-04', complete: true, not_run: [], differences: 0, unexplained: 0, files: 1 })).toBeNull();
    // Differences all explained (paybatch behind the service): the same verdict as report's exit 0.
    expect(notificationFor('reconciliation_written', { date: '2026-01-04', complete: true, not_run: [], differences: 2, unexplained: 0, files: 1 })).toBeNull();
    expect(notificationFor('intake_rejected', { batch: BATCH })).toBeNull();
  });
});

describe('rendering for each channel', () => {
  const notification = notificationFor('row_attention', { batch: BATCH, line: 3, external_id: 'A<B>&C', state: 'manual', reason: 'compliance hold' });
  const record: NotificationRecord = {
    id: 9, channel: 'ops', event: 'row_attention', dedupe_key: notification?.dedupe_key ?? '', payload: payloadOf(notification!, Date.parse('2026-01-05T09:00:00Z')),
    created_at: Date.parse('2026-01-05T09:00:00Z'), attempts: 2, next_attempt_at: 0, delivered_at: null, given_up_at: null, last_error: null,
  };
  const outgoing = outgoingOf(record);

  it('keeps one payload per notification, read back the same for every attempt', () => {
    expect(typeof outgoing).toBe('object');
    expect(outgoing).toMatchObject({ id: 9, attempt: 3, occurred_at: '2026-01-05T09:00:00.000Z', subject: notification?.subject, data: notification?.data });
    expect(outgoingOf({ ...record, payload: 'not json' })).toBe('its payload is not JSON');
    expect(outgoingOf({ ...record, payload: '{"subject": 1}' })).toBe('its payload has no subject, text and data');
  });

  it('spells the signed webhook, the chat message and the mail', () => {
    if (typeof outgoing === 'string') throw new Error(outgoing);
    expect(JSON.parse(webhookBody(outgoing))).toEqual({
      event: 'row_attention', dedupe_key: `row_attention:${BATCH}:3:manual`, occurred_at: '2026-01-05T09:00:00.000Z', attempt: 3,
      subject: outgoing.subject, text: outgoing.text, data: { batch: BATCH, line: 3, external_id: 'A<B>&C', state: 'manual', reason: 'compliance hold' },
    });
    const chat = JSON.parse(chatBody(outgoing)) as { text: string };
    expect(Object.keys(chat)).toEqual(['text']);
    expect(chat.text.split('\n')[0]).toBe(`Row 3 of batch ${BATCH} needs a person: manual`);
    expect(chat.text).toContain('A&lt;B&gt;&amp;C');
    const mail = emailContent(outgoing);
    expect(mail.subject).toBe(`paybatch: Row 3 of batch ${BATCH} needs a person: manual`);
    expect(mail.text).toContain(`(row_attention:${BATCH}:3:manual)`);
  });
});

describe('the notifications configuration', () => {
  const channels = {
    hooks: { type: 'webhook', url: 'https://ops.example/paybatch', secret: 'a-signing-secret-of-32-characters' },
    chat: { type: 'chat', url: 'https://chat.example/services/T000/B000/XXXXSECRET', events: ['balance_exhausted', 'row_attention'] },
    mail: { type: 'email', smtp: { host: 'smtp.example', user: 'paybatch', password: 'smtp-password' }, from: 'paybatch <paybatch@example.com>', to: ['finance@example.com'] },
  };

  it('is off by default and fills in what a channel leaves out', () => {
    expect(configSchema.parse({}).notifications).toEqual({ channels: {}, retry: { base_ms: 5_000, cap_ms: 3_600_000, attempts: 10 }, poll_ms: 5_000 });
    const parsed = notificationsSchema.parse({ channels });
    expect(parsed.channels.hooks).toMatchObject({ key_id: 'paybatch', timeout_ms: 10_000 });
    expect(parsed.channels.mail).toMatchObject({ smtp: { port: 587, secure: false } });
    expect(subscribes(parsed.channels.chat!, 'row_attention')).toBe(true);
    expect(subscribes(parsed.channels.chat!, 'batch_settled')).toBe(false);
    expect(subscribes(parsed.channels.hooks!, 'batch_settled')).toBe(true);
  });

  it('names every bad key', () => {
    const result = notificationsSchema.safeParse({
      channels: {
        'bad name!': channels.chat,
        nosecret: { type: 'webhook', url: 'https://ops.example' },
        both: { type: 'webhook', url: 'https://ops.example', secret: 'a-signing-secret-of-32-characters', secret_file: 's' },
        short: { type: 'webhook', url: 'ftp://ops.example', secret: 'short' },
        events: { type: 'chat', url: 'https://chat.example/x', events: ['batch_paid'] },
        mail: { type: 'email', smtp: { host: 'h', user: 'u' }, from: 'a@b', to: ['not an address'] },
        other: { type: 'pager' },
      },
      retry: { base_ms: 10, cap_ms: 5 },
    });
    expect(result.success).toBe(false);
    const paths = result.error?.issues.map((i) => i.path.join('.')) ?? [];
    for (const expected of ['channels.bad name!', 'channels.nosecret', 'channels.both', 'channels.short.url', 'channels.short.secret', 'channels.events.events.0', 'channels.mail.smtp', 'channels.mail.to.0', 'channels.other.type', 'retry']) {
      expect(paths, JSON.stringify(result.error?.issues)).toContain(expected);
    }
  });

  it('takes the example of docs/operations.md as it is', () => {
    const readme = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('\n## Notifications\n'));
    const example = /```json\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const parsed = configSchema.parse(JSON.parse(example));
    expect(Object.keys(parsed.notifications.channels)).toEqual(['ops', 'payments-chat', 'finance']);
  });

  it('is recorded without its secrets, passwords or chat tokens', () => {
    const shown = JSON.stringify(notificationsShown(notificationsSchema.parse({ channels })));
    for (const secret of ['a-signing-secret-of-32-characters', 'XXXXSECRET', 'smtp-password']) expect(shown).not.toContain(secret);
    expect(shown).toContain('https://chat.example/');
    expect(shown).toContain('finance@example.com');
  });
});

describe('the nightly reconciliation, told by its verdict', () => {
  it('tells an incomplete report, naming what was not checked, even with 0 differences', () => {
    const n = notificationFor('reconciliation_written', { date: '2026-01-04', verdict: 'incomplete: ledger not compared', complete: false, not_run: ['service_ledger'], differences: 0, unexplained: 0, files: 4 });
    expect(n).toMatchObject({
      event: 'reconciliation_differences', dedupe_key: 'reconciliation_differences:2026-01-04', subject: 'Reconciliation for 2026-01-04: incomplete: ledger not compared',
      data: { date: '2026-01-04', verdict: 'incomplete: ledger not compared', complete: false, not_run: ['service_ledger'], differences: 0, unexplained: 0, files: 4 },
    });
    expect(n?.text).toMatch(/is incomplete: ledger not compared\. It cannot be signed off as it is/);
    expect(n?.text).not.toMatch(/0 differences/);
  });

  it('tells a report that does not say its checks all ran (fields of an older paybatch)', () => {
    expect(notificationFor('reconciliation_written', { date: '2026-01-04', differences: 0, files: 1 })?.subject).toBe('Reconciliation for 2026-01-04: incomplete: the checks made were not recorded');
  });
});
