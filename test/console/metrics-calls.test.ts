/**
 * The client's call observer, which feeds paybatch_service_calls_total: every
 * HTTP request (retries included) told with its route template, its outcome and
 * its duration; an observer that throws changes nothing for the call.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallOutcome, Endpoint } from '../../src/api/calls.js';
import { callOutcome } from '../../src/api/calls.js';
import { PayoutClient } from '../../src/api/client.js';
import { freePort } from '../../chaos/free-port.js';

const TX = { id: 'tr_1', external_id: 'PAY-1', state: 'approved', input_amount_in_cents: '100', input_currency: 'USD', output_amount_in_cents: '80', output_currency: 'GBP' };

describe('the call observer', () => {
  let server: Server;
  let base: string;
  let answers: number[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      const status = answers.shift() ?? 200;
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(status === 200 ? JSON.stringify({ object: TX }) : JSON.stringify({ errors: [{ message: 'no' }] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));

  const client = (baseUrl: string, onCall?: (e: Endpoint, o: CallOutcome, s: number) => void): PayoutClient => new PayoutClient({
    baseUrl, credentials: { apiKey: 'k', apiSecret: 's' }, timeoutMs: 1000, retry: { baseMs: 1, capMs: 5, attempts: 3 }, maxAnswerBytes: 65_536, onCall,
  });

  it('names outcomes by what the caller can act on', () => {
    expect([null, { status: 200, readable: true }, { status: 200, readable: false }, { status: 401, readable: true }, { status: 403, readable: true },
      { status: 429, readable: true }, { status: 302, readable: true }, { status: 422, readable: true }, { status: 503, readable: false }].map(callOutcome))
      .toEqual(['no_answer', 'ok', 'unreadable', 'auth_refused', 'auth_refused', 'rate_limited', 'redirect', 'rejected', 'server_error']);
  });

  it('tells every request with its route template, retries included; an observer that throws changes nothing; stops when asked', async () => {
    const seen: [Endpoint, CallOutcome][] = [];
    const c = client(base, () => {
      throw new Error('a broken observer');
    });
    const stop = c.observeCalls((endpoint, outcome, seconds) => {
      expect(seconds).toBeGreaterThanOrEqual(0);
      seen.push([endpoint, outcome]);
    });
    answers = [503, 200];
    expect((await c.getTransaction('tr_1')).id).toBe('tr_1');
    answers = [422];
    await expect(c.fundTransaction('tr_1', { input_amount_in_cents: '100', input_currency: 'USD' })).rejects.toThrow();
    expect(seen).toEqual([['GET /transactions/:id', 'server_error'], ['GET /transactions/:id', 'ok'], ['POST /transactions/:id/fund', 'rejected']]);
    stop();
    await c.getTransaction('tr_1');
    expect(seen).toHaveLength(3);
    await c.close();
  });

  it('a request with no answer is told as no_answer', async () => {
    const seen: CallOutcome[] = [];
    const c = client(`http://127.0.0.1:${await freePort()}`, (_endpoint, outcome) => seen.push(outcome));
    await expect(c.findTransactions('PAY-1')).rejects.toThrow(/no answer/);
    expect(seen).toEqual(['no_answer', 'no_answer', 'no_answer']);
    await c.close();
  });
});
