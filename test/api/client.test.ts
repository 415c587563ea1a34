import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getEventListeners } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PayoutClient } from '../../src/api/client.js';
import type { ClientOptions } from '../../src/api/client.js';
import { AuthenticationRefused, OutcomeUnknown, Rejected, Retryable } from '../../src/api/errors.js';
import type { PayoutRequest } from '../../src/api/payout-request.js';
import { operator, testSandbox } from '../helpers/sandbox.js';
import type { TestSandbox } from '../helpers/sandbox.js';
import { createBody } from '../helpers/requests.js';

const RETRY = { baseMs: 100, capMs: 10_000, attempts: 4 };

function clientFor(target: { url: string; apiKey: string; apiSecret: string }, extra: Partial<ClientOptions> = {}) {
  const sleeps: number[] = [];
  const client = new PayoutClient({
    baseUrl: target.url,
    credentials: { apiKey: target.apiKey, apiSecret: target.apiSecret },
    timeoutMs: 2000,
    retry: RETRY,
    maxAnswerBytes: 1024 * 1024,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...extra,
  });
  return { client, sleeps };
}

const request = (corridor: Parameters<typeof createBody>[0] = 'gbr', overrides: Parameters<typeof createBody>[1] = {}) => createBody(corridor, overrides) as unknown as PayoutRequest;

describe('payout client against the sandbox', () => {
  let sandbox: TestSandbox;
  let client: PayoutClient;
  let sleeps: number[];
  beforeAll(async () => {
    sandbox = await testSandbox();
    ({ client, sleeps } = clientFor(sandbox));
  });
  afterAll(async () => {
    await client.close();
    await sandbox.stop();
  });
  afterEach(async () => {
    await operator(sandbox, 'DELETE', '/faults');
    sleeps.length = 0;
  });

  it('creates, finds, reads, funds with the guard and cancels', async () => {
    const body = request('gbr', { output_amount_in_cents: '79120' });
    const created = await client.createTransaction(body);
    expect(created).toMatchObject({ external_id: body.external_id, state: 'approved', input_amount_in_cents: '100000', input_currency: 'USD', may_cancel: true });
    expect((await client.findTransactions(body.external_id)).map((t) => t.id)).toEqual([created.id]);
    expect(await client.findTransactions('nothing-like-it')).toEqual([]);
    expect((await client.getTransaction(created.id)).state).toBe('approved');
    const funded = await client.fundTransaction(created.id, { input_amount_in_cents: '100000', input_currency: 'USD' });
    expect(funded.state).toBe('pending');
    expect((await client.cancelTransaction(created.id)).id).toBe(created.id);
    expect(sleeps).toEqual([]);
  });

  it('lists corridors and manages webhooks', async () => {
    expect((await client.listCorridors('NGA')).map((c) => c.id).sort()).toEqual(['global-usd-bank', 'nga-bank', 'nga-cash']);
    const hook = await client.registerWebhook('transaction.paid', 'http://127.0.0.1:9/hooks');
    expect((await client.listWebhooks()).map((w) => w.id)).toContain(hook.id);
    await client.deleteWebhook(hook.id);
    expect(await client.listWebhooks()).toEqual([]);
  });

  it('reports a 422 as Rejected with every error, and a duplicate with the existing transaction [D6]', async () => {
    const invalid = await client.createTransaction({ ...request(), output_amount_in_cents: 'x' }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(Rejected);
    expect((invalid as Rejected).errors).toContainEqual({ field: 'output_amount_in_cents', message: 'must be an integer count of minor units, as a string' });
    const body = request();
    const first = await client.createTransaction(body);
    const duplicate = (await client.createTransaction(body).catch((e: unknown) => e)) as Rejected;
    expect(duplicate.concerns('external_id')).toBe(true);
    expect((duplicate.meta?.existing as { transaction: { id: string } }).transaction.id).toBe(first.id);
    const guard = await client.fundTransaction(first.id, { input_amount_in_cents: '1', input_currency: 'USD' }).catch((e: unknown) => e);
    expect(guard).toBeInstanceOf(Rejected);
    expect((guard as Rejected).concerns('input_amount_in_cents')).toBe(true);
    expect(await client.getTransaction('tr_nope').catch((e: unknown) => (e as Rejected).status)).toBe(404);
  });

  it('stops on refused credentials with exit code 77', async () => {
    const { client: wrong } = clientFor({ ...sandbox, apiSecret: 'not-the-secret' });
    const error = await wrong.listCorridors('GBR').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationRefused);
    expect((error as AuthenticationRefused).exitCode).toBe(77);
    await wrong.close();
  });

  it('waits as long as a 429 asks, for reads and writes alike', async () => {
    await operator(sandbox, 'PUT', '/faults', { http_429_rate: 1, retry_after_s: 3 });
    const { client: patient, sleeps: waited } = clientFor(sandbox, {
      sleep: async (ms) => {
        waited.push(ms);
        await operator(sandbox, 'DELETE', '/faults');
      },
    });
    expect((await patient.createTransaction(request())).state).toBe('approved');
    expect(waited).toEqual([3000]);
    await patient.close();
  });

  it('caps an absurd Retry-After at the backoff cap and says so; never waits past a deadline or a stop', async () => {
    await operator(sandbox, 'PUT', '/faults', { http_429_rate: 1, retry_after_s: 999_999_999 });
    const said: Record<string, unknown>[] = [];
    const { client: capped, sleeps: waited } = clientFor(sandbox, { log: (_event, fields) => said.push(fields) });
    expect(await capped.getTransaction('tr_x').catch((e: unknown) => e)).toBeInstanceOf(Retryable);
    expect(waited).toEqual([10_000, 10_000, 10_000]);
    expect(said[0]).toMatchObject({ asked_s: 999_999_999, waited_s: 10 });

    // A deadline 5 s away: a 10 s wait would outlast it, so the call ends at once with its error.
    waited.length = 0;
    const error = await capped.createTransaction(request(), { until: Date.now() + 5_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Retryable);
    expect(waited).toEqual([]);

    // A stop: the wait ends as soon as the signal fires (real timers here).
    const { client: stoppable } = clientFor(sandbox, { sleep: undefined });
    const stop = new AbortController();
    const started = Date.now();
    setTimeout(() => stop.abort(), 100);
    expect(await stoppable.getTransaction('tr_x', { signal: stop.signal }).catch((e: unknown) => e)).toBeInstanceOf(Retryable);
    expect(Date.now() - started).toBeLessThan(5_000);
    await capped.close();
    await stoppable.close();
  });

  it('signs exactly the URL it sends: a lookup of an external id with every printable ASCII character and non-ASCII ones', async () => {
    let printable = '';
    for (let code = 0x20; code < 0x7f; code++) printable += String.fromCharCode(code);
    for (const externalId of [printable, "O'Brien & Sons (2026)*!", 'Zahlung für Müller – 10 €', '付款-7', ' spaced out ']) {
      const body = { ...request(), external_id: externalId };
      const created = await client.createTransaction(body);
      expect(created.external_id).toBe(externalId);
      const found = await client.findTransactions(externalId);
      expect(found.map((t) => t.id)).toEqual([created.id]);
    }
  });

  it('retries a failed read with backoff, and gives up after the configured attempts', async () => {
    await operator(sandbox, 'PUT', '/faults', { http_503_rate: 1 });
    const error = await client.listCorridors('GBR').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Retryable);
    expect(sleeps).toEqual([50, 100, 200]); // random 0.5 of 100, 200, 400
  });

  it('never repeats a write whose outcome is unknown: a 500, a reset after commit, a timeout', async () => {
    await operator(sandbox, 'PUT', '/faults', { http_500_rate: 1 });
    const refused = request();
    expect(await client.createTransaction(refused).catch((e: unknown) => e)).toBeInstanceOf(OutcomeUnknown);
    await operator(sandbox, 'DELETE', '/faults');
    expect(await client.findTransactions(refused.external_id)).toEqual([]);

    await operator(sandbox, 'PUT', '/faults', { reset_after_commit: { create: 1 } });
    const reset = request();
    expect(await client.createTransaction(reset).catch((e: unknown) => e)).toBeInstanceOf(OutcomeUnknown);
    await operator(sandbox, 'DELETE', '/faults');
    const [made] = await client.findTransactions(reset.external_id);
    expect(made?.state).toBe('approved');

    await operator(sandbox, 'PUT', '/faults', { reset_after_commit: { fund: 1 } });
    expect(await client.fundTransaction(made?.id as string, { input_amount_in_cents: made?.input_amount_in_cents as string, input_currency: 'USD' }).catch((e: unknown) => e)).toBeInstanceOf(OutcomeUnknown);
    await operator(sandbox, 'DELETE', '/faults');
    expect((await client.getTransaction(made?.id as string)).state).toBe('pending');
    expect(sleeps).toEqual([]);

    const { client: hasty } = clientFor(sandbox, { timeoutMs: 100 });
    await operator(sandbox, 'PUT', '/faults', { latency: { rate: 1, min_ms: 400, max_ms: 400 } });
    expect(await hasty.createTransaction(request()).catch((e: unknown) => e)).toBeInstanceOf(OutcomeUnknown);
    expect(await hasty.getTransaction(made?.id as string).catch((e: unknown) => e)).toBeInstanceOf(Retryable);
    await hasty.close();
  });

  it('reads the live service\'s wrapped answers the same way [D4]', async () => {
    const live = await testSandbox({ live_style: true });
    const { client: liveClient } = clientFor(live);
    try {
      const created = await liveClient.createTransaction(request());
      expect(created.state).toBe('approved');
      expect((await liveClient.findTransactions(created.external_id))[0]?.id).toBe(created.id);
      const error = (await liveClient.createTransaction({ ...request(), type: 'pigeon' }).catch((e: unknown) => e)) as Rejected;
      expect(error.concerns('type')).toBe(true);
    } finally {
      await liveClient.close();
      await live.stop();
    }
  });
});

describe('payout client against hostile answers', () => {
  let hits = 0;
  let elsewhereHits = 0;
  let answer: (res: ServerResponse) => void = (res) => res.end();
  const server = createServer((_req, res) => {
    hits += 1;
    answer(res);
  });
  const elsewhere = createServer((_req, res) => {
    elsewhereHits += 1;
    res.end('{}');
  });
  let target: { url: string; apiKey: string; apiSecret: string };
  let elsewhereUrl = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    target = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, apiKey: 'k', apiSecret: 's' };
    elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/steal`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    elsewhere.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await new Promise((resolve) => elsewhere.close(resolve));
  });

  async function both(respond: typeof answer) {
    answer = respond;
    const { client } = clientFor(target, { retry: { ...RETRY, attempts: 1 }, maxAnswerBytes: 64 * 1024 });
    const write = await client.createTransaction(request()).catch((e: unknown) => e);
    const read = await client.getTransaction('t1').catch((e: unknown) => e);
    await client.close();
    return { write, read };
  }

  it('refuses a huge answer without holding it', async () => {
    const { write, read } = await both((res) => res.end(JSON.stringify({ id: 't', external_id: 'e', state: 'paid', pad: 'x'.repeat(1024 * 1024) })));
    expect(write).toBeInstanceOf(OutcomeUnknown);
    expect(read).toBeInstanceOf(Retryable);
  });

  it('refuses a huge answer sent in pieces, no length given, without holding it', async () => {
    const { write, read } = await both((res) => {
      res.write(JSON.stringify({ id: 't', external_id: 'e', state: 'paid' }).slice(0, -1));
      for (let piece = 0; piece < 64; piece++) res.write(`,"pad${piece}":"${'x'.repeat(16 * 1024)}"`);
      res.end('}');
    });
    expect(write).toBeInstanceOf(OutcomeUnknown);
    expect(read).toBeInstanceOf(Retryable);
  });

  it('reads an answer sent in pieces, no length given, as a whole', async () => {
    answer = (res) => {
      const text = JSON.stringify({ id: 't1', external_id: 'e', state: 'paid', input_amount_in_cents: '100', input_currency: 'USD', output_amount_in_cents: '100', output_currency: 'USD' });
      res.write(text.slice(0, 20));
      res.end(text.slice(20));
    };
    const { client } = clientFor(target, { retry: { ...RETRY, attempts: 1 } });
    const read = await client.getTransaction('t1').catch((e: unknown) => e);
    await client.close();
    expect(read).toMatchObject({ id: 't1', state: 'paid' });
  });

  it('treats invalid JSON and a transaction without its fields as unreadable', async () => {
    let outcome = await both((res) => res.end('{"id": "t1", '));
    expect(outcome.write).toBeInstanceOf(OutcomeUnknown);
    expect(outcome.read).toBeInstanceOf(Retryable);
    outcome = await both((res) => res.end(JSON.stringify({ id: 't1', state: 'teleported' })));
    expect(outcome.write).toBeInstanceOf(OutcomeUnknown);
    expect(outcome.read).toBeInstanceOf(Retryable);
  });

  it('ends a read in flight at once on a stop; a write runs to its timeout (cutting it off would leave its outcome unknown)', async () => {
    answer = () => {}; // never answers
    const { client } = clientFor(target, { retry: { ...RETRY, attempts: 1 }, timeoutMs: 600 });
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 50);
    let started = performance.now();
    const read = await client.getTransaction('t1', { signal: stop.signal }).catch((e: unknown) => e);
    expect(read).toBeInstanceOf(Retryable);
    expect(performance.now() - started).toBeLessThan(400);
    started = performance.now();
    const write = await client.createTransaction(request(), { signal: stop.signal }).catch((e: unknown) => e);
    expect(write).toBeInstanceOf(OutcomeUnknown);
    // The stop fired long before: a write it ended would have failed at once. It ran to its own timer (undici's
    // timeouts, on a coarse clock of their own, ended such calls up to a fifth early: 511 ms seen for 600).
    expect(performance.now() - started).toBeGreaterThanOrEqual(580);
    await client.close();
  });

  it('ends many reads under one stop together, with one listener on it (no leak warning), and a read still waiting for a connection at once, unsent', async () => {
    const methods: string[] = [];
    answer = () => {}; // never answers
    const seen = (req: IncomingMessage): void => {
      methods.push(req.method ?? '');
    };
    server.on('request', seen);
    const warnings: string[] = [];
    const warned = (warning: Error): void => {
      warnings.push(warning.name);
    };
    process.on('warning', warned);
    const { client } = clientFor(target, { retry: { ...RETRY, attempts: 1 }, timeoutMs: 1500 });
    try {
      // 16 writes hold every connection (the client keeps 16 at least); 12 reads wait behind them.
      const writes = Array.from({ length: 16 }, () => client.createTransaction(request()).catch((e: unknown) => e));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const stop = new AbortController();
      const reads = Array.from({ length: 12 }, (_, n) => client.getTransaction(`t${n}`, { signal: stop.signal }).catch((e: unknown) => e));
      expect(getEventListeners(stop.signal, 'abort')).toHaveLength(1);
      const started = performance.now();
      setTimeout(() => stop.abort(), 50);
      for (const read of await Promise.all(reads)) expect(read).toBeInstanceOf(Retryable);
      expect(performance.now() - started).toBeLessThan(500);
      for (const write of await Promise.all(writes)) expect(write).toBeInstanceOf(OutcomeUnknown);
      // The reads never reached the service: a connection freed by the writes' timeout carried none of them.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(methods.filter((method) => method === 'GET')).toEqual([]);
      expect(methods.filter((method) => method === 'POST')).toHaveLength(16);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', warned);
      server.off('request', seen);
      await client.close();
    }
  });

  it('bounds the whole exchange: an answer begun and never finished is unreadable once the timeout passed', async () => {
    // Headers and the first bytes come at once, the rest never: only a timeout on the whole exchange ends it.
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"id": "t1", ');
      const drip = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(drip));
    };
    const { client } = clientFor(target, { retry: { ...RETRY, attempts: 1 }, timeoutMs: 400 });
    const started = performance.now();
    const write = await client.createTransaction(request()).catch((e: unknown) => e);
    expect(write).toBeInstanceOf(OutcomeUnknown);
    expect((write as Error).message).toMatch(/could not be read/);
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(300);
    expect(took).toBeLessThan(2000);
    await client.close();
  });

  it('does not follow a redirect to another host, so our signature goes nowhere else', async () => {
    const { write, read } = await both((res) => res.writeHead(302, { location: elsewhereUrl }).end());
    expect(write).toBeInstanceOf(OutcomeUnknown);
    expect(read).toBeInstanceOf(Rejected);
    expect((read as Rejected).status).toBe(302);
    expect(elsewhereHits).toBe(0);
    expect(hits).toBeGreaterThan(0);
  });
});
