import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { requestSignature } from '../../src/api/signing.js';
import { call, operator, testSandbox } from '../helpers/sandbox.js';
import { createBody } from '../helpers/requests.js';

describe('sandbox persistence with --db', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-sandbox-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps transactions, balances, the ledger, webhooks, settings and used nonces across a restart', async () => {
    const file = join(dir, 'sandbox.db');
    const first = await testSandbox({ balances: { USD: '777777' } }, file);
    const tx = (await call(first, 'POST', '/transactions', createBody('gbr'))).body;
    await call(first, 'POST', `/transactions/${tx.id}/fund`);
    await call(first, 'POST', '/webhooks', { event_type: 'transaction.paid', uri: 'http://127.0.0.1:9/x' });
    await operator(first, 'PUT', '/corridors/gbr-bank', { active: false });
    first.advance(60_000);
    const nonce = 'kept-nonce';
    const url = `${first.url}/corridors/GBR`;
    const headers = { 'authorization-key': first.apiKey, 'authorization-nonce': nonce, 'authorization-signature': requestSignature(first.apiSecret, nonce, 'GET', url, '') };
    expect((await call(first, 'GET', '/corridors/GBR', undefined, { sign: false, headers })).status).toBe(200);
    const before = {
      tx: (await call(first, 'GET', `/transactions/${tx.id}`)).body,
      balances: (await operator(first, 'GET', '/balances')).body,
      ledger: (await operator(first, 'GET', '/ledger')).body,
      time: (await operator(first, 'GET', '/time')).body,
    };
    await first.stop();

    // Same file, a fresh process state and a config that would seed other balances.
    const second = await testSandbox({ balances: { USD: '1' } }, file);
    try {
      expect((await call(second, 'GET', `/transactions/${tx.id}`)).body).toEqual(before.tx);
      expect((await operator(second, 'GET', '/balances')).body).toEqual(before.balances);
      expect((await operator(second, 'GET', '/ledger')).body).toEqual(before.ledger);
      expect((await operator(second, 'GET', '/time')).body).toEqual(before.time);
      expect((await call(second, 'GET', '/webhooks')).body).toHaveLength(1);
      expect((await call(second, 'GET', '/corridors/GBR')).body.find((c: { id: string }) => c.id === 'gbr-bank').active).toBe(false);
      const replayUrl = `${second.url}/corridors/GBR`;
      const replay = { ...headers, 'authorization-signature': requestSignature(second.apiSecret, nonce, 'GET', replayUrl, '') };
      expect((await call(second, 'GET', '/corridors/GBR', undefined, { sign: false, headers: replay })).status).toBe(401);
      expect(before.balances.USD).toBe(String(777777n - BigInt(tx.input_amount_in_cents)));
    } finally {
      await second.stop();
    }
  });
});
