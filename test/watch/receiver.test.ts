import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonContext } from '../helpers/daemon.js';
import { daemonContext, eventually } from '../helpers/daemon.js';

const delivery = (over: Record<string, unknown> = {}): string =>
  JSON.stringify({ webhook_id: 'wh_test', event_type: 'transaction.paid', data: { id: 'tr_nobody', external_id: 'NOBODY-1', state: 'paid', updated_at: '2026-01-01T00:00:00.000Z' }, ...over });

/** Between two pieces of a slow-drip body: well under the receiver's body timeout, so that the sender never goes quiet for it. */
const DRIP_MS = 50;

/**
 * A POST written piece by piece, with or without a declared length; with `key`, it carries the service's key and the
 * other authentication headers (its signature wrong). `drip`: a piece every DRIP_MS until answered, all but the last
 * (the body never ends); the request is let go once answered. `unfinished`: the body is never ended (the rest of a
 * declared length never comes); the request is let go once answered. `written`: the pieces sent.
 */
function rawPost(url: string, pieces: Buffer[], options: { drip?: boolean; length?: number; key?: string; unfinished?: boolean } = {}): Promise<{ status: number | null; error: string | null; written: number }> {
  return new Promise((resolve) => {
    const target = new URL(url);
    const auth = options.key === undefined ? {} : { 'authorization-key': options.key, 'authorization-nonce': crypto.randomUUID(), 'authorization-signature': 'f'.repeat(128) };
    const headers = { ...auth, ...(options.length === undefined ? {} : { 'content-length': options.length }) };
    let written = 0;
    let answered = false;
    const answer = (status: number | null, error: string | null): void => {
      if (!answered) resolve({ status, error, written });
      answered = true;
    };
    const req = request({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers }, (res) => {
      res.resume();
      res.on('end', () => {
        answer(res.statusCode ?? null, null);
        if (options.unfinished || options.drip) req.destroy();
      });
    });
    req.on('error', (error) => answer(null, error.message));
    void (async () => {
      for (const piece of options.drip ? pieces.slice(0, -1) : pieces) {
        if (req.destroyed || answered) return;
        req.write(piece);
        written += 1;
        if (options.drip) await new Promise((r) => setTimeout(r, DRIP_MS));
      }
      if (!req.destroyed && !options.unfinished && !options.drip) req.end();
    })();
  });
}

describe('the webhook receiver [6], [D3]', () => {
  let ctx: DaemonContext;
  const received = async (): Promise<number> => (await ctx.store.webhookEventCounts()).received;

  beforeAll(async () => {
    ctx = await daemonContext({ config: { watch: { max_body_bytes: 4096, body_timeout_ms: 400 } } });
  });
  afterAll(async () => ctx.stop());

  it('answers /healthz', async () => {
    const response = await fetch(ctx.started.healthUrl);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: 'ok' });
  });

  it('keeps a signed delivery before answering 200, even for a transaction it does not know (kept and logged)', async () => {
    const before = await received();
    const answer = await ctx.deliver(delivery());
    expect(answer.status).toBe(200);
    expect(await received()).toBe(before + 1);
    await eventually(async () => (await ctx.store.webhookEventCounts()).outcomes.unknown_transaction === 1, 5000, 'the event applied');
    expect(ctx.logs.some((l) => l.event === 'webhook_unknown_object')).toBe(true);
  });

  it('refuses a forged, an unsigned, a wrong-key and a replayed delivery with 401, and keeps none of them', async () => {
    const before = await received();
    expect((await ctx.deliver(delivery(), { secret: 'not-the-secret' })).status).toBe(401);
    expect((await ctx.deliver(delivery(), { omit: ['authorization-key', 'authorization-nonce', 'authorization-signature'] })).status).toBe(401);
    expect((await ctx.deliver(delivery(), { omit: ['authorization-signature'] })).status).toBe(401);
    expect((await ctx.deliver(delivery(), { key: 'someone-else' })).status).toBe(401);
    const nonce = crypto.randomUUID();
    expect((await ctx.deliver(delivery({ webhook_id: 'wh_replay' }), { nonce })).status).toBe(200);
    expect((await ctx.deliver(delivery({ webhook_id: 'wh_replay' }), { nonce })).status).toBe(401);
    expect(await received()).toBe(before + 1);
  });

  it('refuses malformed JSON and a body that is not a delivery with 400, an oversized body with 413, whether declared or streamed', async () => {
    const before = await received();
    expect((await ctx.deliver('{"event_type": "transaction.paid", ')).status).toBe(400);
    expect((await ctx.deliver('{"hello": "world"}')).status).toBe(400);
    expect((await ctx.deliver(delivery({ padding: 'x'.repeat(5000) }))).status).toBe(413);
    const streamed = await rawPost(ctx.started.webhookUrl, Array.from({ length: 20 }, () => Buffer.alloc(1024, 'a')), { key: ctx.sandbox.apiKey });
    expect(streamed.status === 413 || streamed.error !== null).toBe(true);
    expect(await received()).toBe(before);
  });

  it('cuts off a slow-drip body, and stays up', async () => {
    // Dripped until the receiver answers or closes the connection: its body timeout, not the sender, ends the wait. The
    // declared length is never reached, so nothing but the timeout can end the request before the test's own bound.
    const slow = await rawPost(ctx.started.webhookUrl, Array.from({ length: 4096 }, () => Buffer.from('{')), { drip: true, length: 4096, key: ctx.sandbox.apiKey });
    expect(slow.status === 408 || slow.error !== null).toBe(true);
    // Cut off for its slowness, while the sender was still at it (more than one piece went out).
    expect(slow.written).toBeGreaterThan(1);
    expect(ctx.logs.some((l) => l.event === 'webhook_refused' && l.fields.status === 408 && /took longer than 400 ms/.test(String(l.fields.reason)))).toBe(true);
    expect((await fetch(ctx.started.healthUrl)).status).toBe(200);
  });

  it('refuses from the headers alone, before reading a body: no key, another key, a size over the limit', async () => {
    // A body that never comes: refused at once all the same, since nothing of it is needed.
    expect((await rawPost(ctx.started.webhookUrl, [Buffer.from('{')], { length: 1_000_000, unfinished: true })).status).toBe(401);
    expect((await rawPost(ctx.started.webhookUrl, [Buffer.from('{')], { length: 1_000_000, unfinished: true, key: 'someone-else' })).status).toBe(401);
    expect((await rawPost(ctx.started.webhookUrl, [Buffer.from('{')], { length: 1_000_000, unfinished: true, key: ctx.sandbox.apiKey })).status).toBe(413);
  });

  it('logs refusals at a bounded rate: the first of each kind, then counts', async () => {
    const before = ctx.logs.filter((l) => l.event === 'webhook_refused').length;
    await Promise.all(Array.from({ length: 200 }, () => fetch(ctx.started.webhookUrl, { method: 'POST', body: '{}' })));
    const lines = ctx.logs.filter((l) => l.event === 'webhook_refused').length - before;
    expect(lines).toBeLessThanOrEqual(1);
  });

  it('keeps an unknown event type, but applies nothing from it', async () => {
    expect((await ctx.deliver(delivery({ event_type: 'transaction.teleported' }))).status).toBe(200);
    await eventually(async () => (await ctx.store.webhookEventCounts()).outcomes.unknown_event_type === 1, 5000, 'the event applied');
  });

  it('accepts the live spelling (webhook, event, object)', async () => {
    const live = JSON.stringify({ webhook: 'wh_live', event: 'sender.approved', object: { id: 'sd_x', external_id: 'NO-SENDER', state: 'approved' } });
    expect((await ctx.deliver(live)).status).toBe(200);
    await eventually(async () => (await ctx.store.webhookEventCounts()).outcomes.no_rows_waiting === 1, 5000, 'the event applied');
  });

  it('answers 404 elsewhere and 405 to other methods', async () => {
    expect((await fetch(new URL('/other', ctx.started.webhookUrl))).status).toBe(404);
    expect((await fetch(ctx.started.webhookUrl)).status).toBe(405);
  });
});
