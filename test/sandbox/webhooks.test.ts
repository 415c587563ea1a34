import { afterEach, describe, expect, it } from 'vitest';
import { call, operator, testSandbox } from '../helpers/sandbox.js';
import type { TestSandbox } from '../helpers/sandbox.js';
import { createBody } from '../helpers/requests.js';
import { startReceiver } from '../helpers/receiver.js';
import type { Receiver } from '../helpers/receiver.js';

describe('webhook deliveries [6], [D3], [D14]', () => {
  let sandbox: TestSandbox;
  let receiver: Receiver;
  afterEach(async () => {
    await sandbox.stop();
    await receiver.stop();
  });

  async function start(config: Parameters<typeof testSandbox>[0] = {}, answer = 200): Promise<void> {
    sandbox = await testSandbox(config);
    receiver = await startReceiver(sandbox.apiSecret, answer);
  }

  it('posts each state change once, signed over the raw body and the registered URL', async () => {
    await start();
    const hook = (await call(sandbox, 'POST', '/webhooks', { event_type: 'transaction.pending', uri: receiver.uri })).body;
    const tx = (await call(sandbox, 'POST', '/transactions', createBody('gbr'))).body;
    await call(sandbox, 'POST', `/transactions/${tx.id}/fund`);
    await sandbox.deliveriesSettled();
    expect(receiver.deliveries).toHaveLength(1);
    const [delivery] = receiver.deliveries;
    expect(delivery?.signatureValid).toBe(true);
    expect(delivery?.headers['authorization-key']).toBe(sandbox.apiKey);
    expect(delivery?.body).toEqual({ webhook_id: hook.id, event_type: 'transaction.pending', data: expect.objectContaining({ id: tx.id, state: 'pending' }) });
    expect(delivery?.body.data.sender.external_id).toBe('S-ADA');
    const log = (await operator(sandbox, 'GET', '/deliveries')).body;
    expect(log).toEqual([expect.objectContaining({ webhook_id: hook.id, event_type: 'transaction.pending', object_id: tx.id, outcome: 'delivered', http_status: 200 })]);
  });

  it('uses the live spelling webhook, event and object in live style [D14]', async () => {
    await start({ live_style: true });
    const hook = (await call(sandbox, 'POST', '/webhooks', { event_type: 'sender.approved', uri: receiver.uri })).body.object;
    await call(sandbox, 'POST', '/transactions', createBody('gbr', { sender: { external_id: 'S-LIVE' } }));
    await sandbox.deliveriesSettled();
    expect(receiver.deliveries[0]?.body).toEqual({ webhook: hook.id, event: 'sender.approved', object: expect.objectContaining({ external_id: 'S-LIVE', state: 'approved' }) });
    expect(receiver.deliveries[0]?.signatureValid).toBe(true);
  });

  it('logs a failed delivery and never retries it', async () => {
    await start({}, 500);
    await call(sandbox, 'POST', '/webhooks', { event_type: 'transaction.approved', uri: receiver.uri });
    await call(sandbox, 'POST', '/transactions', createBody('gbr'));
    await sandbox.deliveriesSettled();
    sandbox.advance(3_600_000);
    await sandbox.deliveriesSettled();
    expect(receiver.deliveries).toHaveLength(1);
    expect((await operator(sandbox, 'GET', '/deliveries')).body).toEqual([expect.objectContaining({ outcome: 'failed', http_status: 500 })]);
    expect(sandbox.logs.some((line) => /answered 500; not retried/.test(line))).toBe(true);
  });

  it('logs an unreachable receiver as failed', async () => {
    await start();
    await receiver.stop();
    receiver = await startReceiver(sandbox.apiSecret);
    await call(sandbox, 'POST', '/webhooks', { event_type: 'transaction.approved', uri: 'http://127.0.0.1:9/unreachable' });
    await call(sandbox, 'POST', '/transactions', createBody('gbr'));
    await sandbox.deliveriesSettled();
    const [entry] = (await operator(sandbox, 'GET', '/deliveries')).body;
    expect(entry).toMatchObject({ outcome: 'failed', http_status: null });
    expect(entry.error).toBeTruthy();
  });

  it('drops deliveries at the configured rate, logging each as dropped', async () => {
    await start({ faults: { webhook_drop_rate: 1 } });
    await call(sandbox, 'POST', '/webhooks', { event_type: 'transaction.approved', uri: receiver.uri });
    for (let i = 0; i < 3; i++) await call(sandbox, 'POST', '/transactions', createBody('gbr'));
    await sandbox.deliveriesSettled();
    expect(receiver.deliveries).toHaveLength(0);
    const log = (await operator(sandbox, 'GET', '/deliveries')).body;
    expect(log.map((d: { outcome: string }) => d.outcome)).toEqual(['dropped', 'dropped', 'dropped']);
  });
});
