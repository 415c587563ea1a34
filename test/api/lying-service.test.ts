import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PayoutClient } from '../../src/api/client.js';
import { OutcomeUnknown, Rejected } from '../../src/api/errors.js';
import { authHeaders } from '../../src/api/signing.js';
import type { PayoutRequest } from '../../src/api/payout-request.js';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import { FAST_SANDBOX } from '../helpers/engine.js';
import type { LyingService } from '../helpers/lying-service.js';
import { answer, loseAnswerAfterCommit, lookupAlso, lyingService, otherTransaction, PATHS, rule, scaleOutputAmount } from '../helpers/lying-service.js';
import { createBody } from '../helpers/requests.js';
import { call } from '../helpers/sandbox.js';

const payout = (): PayoutRequest => createBody('gbr') as unknown as PayoutRequest;

function clientFor(service: LyingService): PayoutClient {
  return new PayoutClient({
    baseUrl: service.url, credentials: { apiKey: service.apiKey, apiSecret: service.apiSecret },
    timeoutMs: 2000, retry: { baseMs: 5, capMs: 50, attempts: 3 }, maxAnswerBytes: 1024 * 1024,
  });
}

describe('lying service', () => {
  let sandbox: RunningSandbox;
  let liar: LyingService;
  let client: PayoutClient;
  beforeAll(async () => {
    sandbox = await startSandbox({ config: { ...FAST_SANDBOX } });
    liar = await lyingService(sandbox);
    client = clientFor(liar);
  });
  afterEach(() => liar.clear());
  afterAll(async () => {
    await client.close();
    await liar.close();
    await sandbox.stop();
  });

  it('forwards, re-signed, when no rule matches', async () => {
    const body = payout();
    const created = await client.createTransaction(body);
    expect(sandbox.store.transaction(created.id)?.external_id).toBe(body.external_id);
    expect((await client.getTransaction(created.id)).external_id).toBe(body.external_id);
    expect((await client.findTransactions(body.external_id)).map((t) => t.id)).toEqual([created.id]);
    expect(liar.seen.map((s) => [s.method, s.status, s.lie])).toEqual([['POST', 201, null], ['GET', 200, null], ['GET', 200, null]]);
    expect(liar.seen[2]?.path).toBe(`/transactions?external_id=${encodeURIComponent(body.external_id)}`);
  });

  it('answers with another transaction than the one created, once', async () => {
    liar.lie(rule('POST', PATHS.create, otherTransaction(), 1));
    const body = payout();
    const told = await client.createTransaction(body);
    expect(told.id).toMatch(/^tr_foreign_/);
    expect(told.external_id).not.toBe(body.external_id);
    // The create did take effect: only the answer lies.
    const real = sandbox.store.transactionByExternalId(body.external_id);
    expect(real?.id).toBeDefined();
    expect(real?.id).not.toBe(told.id);
    expect((await client.createTransaction(payout())).id).not.toMatch(/^tr_foreign_/);
    expect(liar.seen.map((s) => s.lie)).toEqual(['other_transaction', null]);
  });

  it('names one foreign transaction for every lookup, or adds it to the real list', async () => {
    liar.lie(rule('GET', PATHS.lookup, otherTransaction({ state: 'paid', reuse: true }), 2));
    const [first] = await client.findTransactions('A-1');
    const [second] = await client.findTransactions('B-2');
    expect(first?.state).toBe('paid');
    expect(second?.id).toBe(first?.id);
    const body = payout();
    const created = await client.createTransaction(body);
    liar.lie(rule('GET', PATHS.lookup, lookupAlso()));
    expect((await client.findTransactions(body.external_id)).map((t) => t.id)).toEqual([created.id, expect.stringMatching(/^tr_foreign_/)]);
  });

  it('multiplies the output amount, bare or wrapped [D4]', async () => {
    const created = await client.createTransaction(payout());
    liar.lie(rule('GET', PATHS.transaction, scaleOutputAmount(100n)));
    expect((await client.getTransaction(created.id)).output_amount_in_cents).toBe('1000000');

    const live = await startSandbox({ config: { ...FAST_SANDBOX, live_style: true } });
    const liveLiar = await lyingService(live);
    const liveClient = clientFor(liveLiar);
    try {
      const tx = await liveClient.createTransaction(payout());
      liveLiar.lie(rule('GET', PATHS.transaction, scaleOutputAmount(100n)));
      const raw = await call(liveLiar, 'GET', `/transactions/${tx.id}`);
      expect(raw.body.object.output_amount_in_cents).toBe('1000000');
      expect((await liveClient.getTransaction(tx.id)).output_amount_in_cents).toBe('1000000');
    } finally {
      await liveClient.close();
      await liveLiar.close();
      await live.stop();
    }
  });

  it('loses the answer of a create that took effect', async () => {
    liar.lie(rule('POST', PATHS.create, loseAnswerAfterCommit(), 1));
    const body = payout();
    await expect(client.createTransaction(body)).rejects.toBeInstanceOf(OutcomeUnknown);
    expect(sandbox.store.transactionByExternalId(body.external_id)).toBeDefined();
    expect(await client.findTransactions(body.external_id)).toHaveLength(1);
    expect(liar.seen[0]).toEqual({ method: 'POST', path: '/transactions', status: 0, lie: 'lost_after_commit' });
  });

  it('refuses without forwarding, in each error shape [D5]', async () => {
    const created = await client.createTransaction(payout());
    const guard = { input_amount_in_cents: created.input_amount_in_cents ?? '', input_currency: 'USD' };
    liar.lie(rule('POST', PATHS.fund, answer(422, { errors: ['balance insufficient funds'] }), 1));
    liar.lie(rule('POST', PATHS.fund, answer(422, { errors: { compliance: ['payout blocked by compliance review'] } }), 1));
    const balance = await client.fundTransaction(created.id, guard).catch((e: unknown) => e);
    expect(balance).toBeInstanceOf(Rejected);
    expect((balance as Rejected).errors).toEqual([{ field: 'base', message: 'balance insufficient funds' }]);
    const compliance = await client.fundTransaction(created.id, guard).catch((e: unknown) => e);
    expect((compliance as Rejected).concerns('compliance')).toBe(true);
    expect(sandbox.store.transaction(created.id)?.state).toBe('approved');

    liar.lie(rule('GET', PATHS.lookup, answer(429, { errors: ['slow down'] }, { 'retry-after': '999999999' })));
    const limited = await call(liar, 'GET', '/transactions?external_id=X');
    expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '999999999']);
  });

  it("refuses a signature over another spelling of the URL [D2]: request(urlString) sends ' as %27", async () => {
    const signed = `${liar.url}/transactions?external_id=${encodeURIComponent("O'Brien")}`; // ...=O'Brien
    const onTheWire = `${liar.url}/transactions?external_id=O%27Brien`;
    const credentials = { apiKey: liar.apiKey, apiSecret: liar.apiSecret };

    const mismatched = await request(signed, { headers: authHeaders(credentials, 'GET', signed) });
    expect([mismatched.statusCode, await mismatched.body.json()]).toEqual([401, { errors: ['the signature does not match the request'] }]);
    expect(liar.seen).toEqual([{ method: 'GET', path: '/transactions?external_id=O%27Brien', status: 401, lie: 'bad_signature' }]);

    const matched = await request(signed, { headers: authHeaders(credentials, 'GET', onTheWire) });
    expect([matched.statusCode, await matched.body.json()]).toEqual([200, []]);

    const plain = `${liar.url}/transactions?external_id=X`;
    const otherHost = await request(plain, { headers: authHeaders(credentials, 'GET', plain.replace('127.0.0.1', 'localhost')) });
    await otherHost.body.dump();
    expect(otherHost.statusCode).toBe(401);
    expect(liar.badSignatures).toBe(2);
  });
});
