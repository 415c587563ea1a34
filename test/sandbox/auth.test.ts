import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestSignature } from '../../src/api/signing.js';
import { call, testSandbox } from '../helpers/sandbox.js';
import type { TestSandbox } from '../helpers/sandbox.js';

describe('sandbox authentication [D2]', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await testSandbox();
  });
  afterAll(() => sandbox.stop());

  it('signs per D2: HMAC-SHA512 of nonce & METHOD & URL & sha512hex(body)', () => {
    const emptyHash = createHash('sha512').update('').digest('hex');
    expect(emptyHash.startsWith('cf83e1357eefb8bd')).toBe(true);
    const expected = createHmac('sha512', 'secret')
      .update(`n-1&GET&http://127.0.0.1:4010/v1/transactions?external_id=T-1&${emptyHash}`)
      .digest('hex');
    expect(requestSignature('secret', 'n-1', 'get', 'http://127.0.0.1:4010/v1/transactions?external_id=T-1', '')).toBe(expected);
  });

  it('accepts a properly signed request, query string included', async () => {
    const answer = await call(sandbox, 'GET', '/transactions?external_id=nothing-here');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual([]);
  });

  it('answers 401 with an errors body when a header is missing', async () => {
    for (const missing of ['authorization-key', 'authorization-nonce', 'authorization-signature']) {
      const omitted = await call(sandbox, 'GET', '/corridors/GBR', undefined, { omit: [missing] });
      expect(omitted.status, missing).toBe(401);
      expect(omitted.body.errors[0]).toMatch(/headers are required/);
      const empty = await call(sandbox, 'GET', '/corridors/GBR', undefined, { headers: { [missing]: '' } });
      expect(empty.status, missing).toBe(401);
      expect(empty.body.errors[0]).toMatch(/headers are required/);
    }
  });

  it('answers 401 for an unknown key', async () => {
    const answer = await call({ ...sandbox, apiKey: 'someone-else' }, 'GET', '/corridors/GBR');
    expect(answer.status).toBe(401);
    expect(answer.body.errors).toEqual(['unknown API key']);
  });

  it('answers 401 for a wrong secret, a tampered body and a signature over another URL', async () => {
    expect((await call({ ...sandbox, apiSecret: 'wrong-secret' }, 'GET', '/corridors/GBR')).status).toBe(401);
    const nonce = 'tamper-nonce';
    const url = `${sandbox.url}/webhooks`;
    const signedBody = JSON.stringify({ event_type: 'transaction.paid', uri: 'http://127.0.0.1:1/a' });
    const headers = {
      'authorization-key': sandbox.apiKey,
      'authorization-nonce': nonce,
      'authorization-signature': requestSignature(sandbox.apiSecret, nonce, 'POST', url, signedBody),
    };
    const tampered = await call(sandbox, 'POST', '/webhooks', undefined, {
      sign: false,
      headers,
      raw: JSON.stringify({ event_type: 'transaction.paid', uri: 'http://evil.example/a' }),
    });
    expect(tampered.status).toBe(401);
    expect(tampered.body.errors).toEqual(['the signature does not match the request']);
    const otherUrl = await call(sandbox, 'GET', '/corridors/NGA', undefined, {
      sign: false,
      headers: { ...headers, 'authorization-signature': requestSignature(sandbox.apiSecret, 'x', 'GET', `${sandbox.url}/corridors/GBR`, '') },
    });
    expect(otherUrl.status).toBe(401);
    expect((await call(sandbox, 'GET', '/webhooks')).body).toEqual([]);
  });

  it('refuses a nonce that was already used', async () => {
    const nonce = 'reused-nonce-1';
    const url = `${sandbox.url}/corridors/GBR`;
    const headers = {
      'authorization-key': sandbox.apiKey,
      'authorization-nonce': nonce,
      'authorization-signature': requestSignature(sandbox.apiSecret, nonce, 'GET', url, ''),
    };
    expect((await call(sandbox, 'GET', '/corridors/GBR', undefined, { sign: false, headers })).status).toBe(200);
    const replay = await call(sandbox, 'GET', '/corridors/GBR', undefined, { sign: false, headers });
    expect(replay.status).toBe(401);
    expect(replay.body.errors).toEqual(['the nonce was already used']);
  });
});
