/**
 * /metrics on the daemon's receiver, in-process: every delivery accepted or
 * refused is counted under a fixed reason, the daemon's registry is the one
 * served, and a store that does not answer makes the scrape a 503.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { WebhookReceiver } from '../../src/watch/webhook-receiver.js';
import type { DaemonContext } from '../helpers/daemon.js';
import { daemonContext } from '../helpers/daemon.js';
import { Scrape } from '../helpers/prometheus.js';

const delivery = JSON.stringify({ webhook_id: 'wh_test', event_type: 'transaction.paid', data: { id: 'tr_nobody', external_id: 'NOBODY-1', state: 'paid', updated_at: '2026-01-01T00:00:00.000Z' } });

describe('/metrics on the webhook receiver', () => {
  let ctx: DaemonContext;
  let metricsUrl: string;

  beforeAll(async () => {
    ctx = await daemonContext();
    metricsUrl = ctx.started.healthUrl.replace('/healthz', '/metrics');
  });
  afterAll(async () => ctx.stop());

  it('counts each delivery accepted, and each refused under its reason', async () => {
    const nonce = crypto.randomUUID();
    expect((await ctx.deliver(delivery, { nonce })).status).toBe(200);
    expect((await ctx.deliver(delivery, { nonce })).status).toBe(401);
    expect((await ctx.deliver(delivery, { secret: 'not-the-secret' })).status).toBe(401);
    expect((await ctx.deliver(delivery, { key: 'not-the-key' })).status).toBe(401);
    expect((await ctx.deliver(delivery, { omit: ['authorization-signature'] })).status).toBe(401);
    expect((await ctx.deliver('{not json')).status).toBe(400);
    expect((await ctx.deliver('{}')).status).toBe(400);

    const response = await fetch(metricsUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(ctx.daemon.metrics.contentType);
    const s = new Scrape(await response.text());
    const refused = Object.fromEntries(s.samples('paybatch_webhook_deliveries_total', { outcome: 'refused' }).map((m) => [m.labels.reason, Number(m.value)]));
    expect(refused).toEqual({ replay: 1, bad_signature: 1, unknown_key: 1, unsigned: 1, malformed: 1, not_a_delivery: 1 });
    expect(s.total('paybatch_webhook_deliveries_total', { outcome: 'accepted', reason: 'stored' })).toBeGreaterThanOrEqual(1);
    // The daemon's registry is the one served: the console can serve the same one.
    expect(new Scrape(await ctx.daemon.metrics.scrape()).total('paybatch_webhook_deliveries_total', { outcome: 'refused' })).toBe(6);
  });

  it('answers 503 when the store does not answer, and 404 when no metrics are given', async () => {
    const options = {
      host: '127.0.0.1', port: 0, publicUrl: (port: number) => `http://127.0.0.1:${port}/webhooks`, credentials: { apiKey: 'k', apiSecret: 's' },
      store: ctx.store, clock: systemClock, maxBodyBytes: 1024, bodyTimeoutMs: 1000, maxDeliveriesInFlight: 4, maxConnections: 8, log: () => {}, onStored: () => {},
    };
    const failing = new WebhookReceiver({ ...options, metrics: { contentType: 'text/plain', scrape: () => Promise.reject(new Error('connection refused')), webhookDelivery: () => {} } });
    const none = new WebhookReceiver(options);
    await failing.listen();
    await none.listen();
    try {
      const sick = await fetch(new URL('/metrics', failing.publicUrl));
      expect(sick.status).toBe(503);
      expect(await sick.json()).toMatchObject({ status: 'database', reason: expect.stringMatching(/connection refused/) });
      expect((await fetch(new URL('/metrics', none.publicUrl))).status).toBe(404);
    } finally {
      await failing.close();
      await none.close();
    }
  });
});
