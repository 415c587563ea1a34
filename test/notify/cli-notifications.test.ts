/**
 * Notifications from the real `paybatch run`, a child process, against a fast
 * sandbox over HTTP: a signed webhook and a mail reach servers this test
 * started; a receiver that hangs holds no payout up, and what it did not take
 * waits in the durable outbox for the next start.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { runCli } from '../helpers/cli.js';
import { FAST_ENGINE, FAST_INTAKE, FAST_SANDBOX, template } from '../helpers/engine.js';
import type { HttpReceiver, SmtpReceiver } from './receivers.js';
import { startHttpReceiver, startSmtpReceiver } from './receivers.js';

const SECRET = 'cli-webhook-signing-secret-0123456789';
const SMTP_PASSWORD = 'cli-smtp-password';
/** Ends in 33: the sandbox answers `error` (provider_unavailable) first, then pays it [README: Deterministic outcomes]. */
const ERROR_THEN_PAID_IBAN = 'DE71 3704 0044 0532 0130 33';

describe('paybatch run tells the configured channels', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-notify-cli-'));
  let sandbox: RunningSandbox;
  let smtp: SmtpReceiver;
  const receivers: HttpReceiver[] = [];

  beforeAll(async () => {
    // The error lasts longer than the pause between the run's rounds of reads (a second), so a read sees it.
    sandbox = await startSandbox({ config: { ...FAST_SANDBOX, payout: { ...FAST_SANDBOX.payout, error_retry_ms: 2_000 } } });
    smtp = await startSmtpReceiver({ user: 'paybatch', password: SMTP_PASSWORD });
  });
  afterAll(async () => {
    for (const receiver of receivers) await receiver.stop();
    await smtp.stop();
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function receiver(options: Parameters<typeof startHttpReceiver>[0]): Promise<HttpReceiver> {
    const started = await startHttpReceiver(options);
    receivers.push(started);
    return started;
  }

  function workspace(name: string, hookUrl: string, hookTimeoutMs = 2_000): { home: string; env: NodeJS.ProcessEnv } {
    const home = openWorkspace(join(dir, name)).home;
    writeFileSync(join(home, 'smtp.password'), `${SMTP_PASSWORD}\n`);
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({
      intake: FAST_INTAKE,
      engine: FAST_ENGINE,
      notifications: {
        channels: {
          ops: { type: 'webhook', url: hookUrl, secret: SECRET, timeout_ms: hookTimeoutMs },
          finance: {
            type: 'email', events: ['batch_settled', 'file_rejected'], from: 'paybatch@example.com', to: ['finance@example.com'],
            smtp: { host: '127.0.0.1', port: smtp.port, user: 'paybatch', password_file: join(home, 'smtp.password') },
          },
        },
        retry: { base_ms: 50, cap_ms: 200, attempts: 3 },
        poll_ms: 100,
      },
    }));
    const env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: sandbox.url, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET: sandbox.apiSecret };
    return { home, env };
  }

  function dropBatches(home: string): void {
    const eur = readFileSync(template('templates/eur-iban-bank.csv'), 'utf8').replace('DE89 3704 0044 0532 0130 00', ERROR_THEN_PAID_IBAN);
    writeFileSync(join(home, 'inbox', 'eur.csv'), eur);
    copyFileSync(new URL('../fixtures/batch/unclosed-quote.csv', import.meta.url), join(home, 'inbox', 'broken.csv'));
  }

  it('sends batch_settled with its counts, the row that needed attention and the rejected file, signed, and mails finance', async () => {
    const hook = await receiver({ secret: SECRET });
    const { home, env } = workspace('told', hook.url);
    dropBatches(home);
    const run = await runCli(['run', '--wait', '10s'], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/B\d{8}-[0-9a-f]{8} \(eur\.csv\): 3 rows: paid 3; all final/);

    const byEvent = new Map(hook.deliveries.map((d) => [d.body.event as string, d]));
    expect([...byEvent.keys()].sort()).toEqual(['batch_settled', 'file_rejected', 'row_attention']);
    for (const delivery of hook.deliveries) expect(delivery.signatureValid).toBe(true);
    const settled = byEvent.get('batch_settled')?.body;
    expect(settled.subject).toMatch(/^Batch B\d{8}-[0-9a-f]{8} \(eur\.csv\) settled: 3 rows, 3 paid$/);
    expect(settled.data).toMatchObject({ file: 'eur.csv', rows: 3, by_state: { paid: 3 }, need_person: 0, paid_out: { EUR: '257999' } });
    expect(settled.dedupe_key).toBe(`batch_settled:${settled.data.batch}`);
    expect(byEvent.get('row_attention')?.body.data).toMatchObject({ batch: settled.data.batch, line: 2, external_id: 'EUR-2026-0001', state: 'error' });
    expect(byEvent.get('file_rejected')?.body).toMatchObject({ subject: 'File broken.csv unreadable: nothing of it was sent', data: { file: 'broken.csv', how: 'unreadable' } });

    const mails = smtp.mails.filter((m) => m.to.includes('finance@example.com') && m.raw.includes(settled.data.batch as string));
    expect(mails.map((m) => m.header('x-paybatch-event'))).toEqual(['batch_settled']);
    expect(mails[0]?.header('subject')).toBe(`paybatch: ${settled.subject}`);
    expect(mails[0]?.text).toContain('Paid out: 2,579.99 EUR.');

    const log = readFileSync(join(home, 'paybatch.log'), 'utf8');
    expect(log).toMatch(/"event":"notification_sent".*"channel":"ops","notification":"batch_settled"/);
    expect(log).toMatch(/"event":"notification_sent".*"channel":"finance","notification":"batch_settled"/);
    for (const secret of [SECRET, SMTP_PASSWORD, 'DE71370400440532013033']) {
      expect(log).not.toContain(secret);
      expect(run.stderr).not.toContain(secret);
      expect(JSON.stringify(hook.deliveries.map((d) => d.body))).not.toContain(secret);
    }
  });

  it('pays the batch when the receiver hangs, ends promptly, and the next start delivers what waited in the outbox', async () => {
    const hanging = await receiver({ secret: SECRET, answer: () => 'hang' });
    // A timeout far past anything the run takes, loaded or not: a run that waited for it cannot pass the bound below.
    const { home, env } = workspace('hanging', hanging.url, 60_000);
    writeFileSync(join(home, 'inbox', 'eur.csv'), readFileSync(template('templates/eur-iban-bank.csv')));
    const started = performance.now();
    const run = await runCli(['run', '--wait', '10s'], { env });
    const tookMs = performance.now() - started;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/\(eur\.csv\): 3 rows: paid 3; all final/);
    expect(hanging.requests).toBeGreaterThan(0);
    expect(hanging.deliveries).toEqual([]);
    // The run's own work takes about a second on a quiet machine (9 s under two busy loops and other tests); the hanging
    // receiver adds the stop's grace at most, never its 60 s timeout (the longest allowed). A bound, not a measure of speed.
    expect(tookMs).toBeLessThan(45_000);
    expect(readFileSync(join(home, 'paybatch.log'), 'utf8')).toMatch(/"event":"notification_failed".*"error":"interrupted: paybatch is stopping"/);

    const waiting = SqliteStore.open(join(home, 'paybatch.db'));
    try {
      expect((await waiting.notificationCounts()).ops).toMatchObject({ waiting: 1, delivered: 0 });
    } finally {
      await waiting.close();
    }

    // The receiver is back (at a new address): the next run, with nothing to pay, delivers the notification that waited.
    const back = await receiver({ secret: SECRET });
    const config = JSON.parse(readFileSync(join(home, 'paybatch.config.json'), 'utf8'));
    config.notifications.channels.ops.url = back.url;
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify(config));
    const next = await runCli(['run', '--wait', '1s'], { env });
    expect(next.code, next.stderr).toBe(0);
    expect(back.deliveries.map((d) => [d.body.event, d.signatureValid])).toEqual([['batch_settled', true]]);
    expect(back.deliveries[0]?.body.attempt).toBeGreaterThan(1);
  });
});
