import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, operator, testSandbox } from '../helpers/sandbox.js';
import type { TestSandbox } from '../helpers/sandbox.js';
import { createBody } from '../helpers/requests.js';

describe('sandbox endpoints [4], [D4]-[D16]', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await testSandbox({ max_body_bytes: 4096 });
  });
  afterAll(() => sandbox.stop());

  it('lists the corridors of a country [D12]', async () => {
    const nga = await call(sandbox, 'GET', '/corridors/NGA');
    expect(nga.status).toBe(200);
    expect(nga.body.map((c: { id: string }) => c.id).sort()).toEqual(['global-usd-bank', 'nga-bank', 'nga-cash']);
    expect(nga.body.find((c: { id: string }) => c.id === 'nga-cash')).toEqual({
      id: 'nga-cash', country_code: 'NGA', type: 'cash', input_currency_codes: ['USD'], output_currency_codes: ['NGN', 'USD'], active: true,
    });
    const deu = await call(sandbox, 'GET', '/corridors/DEU');
    expect(deu.body.map((c: { id: string }) => c.id).sort()).toEqual(['eur-iban-bank', 'global-usd-bank']);
    expect((await call(sandbox, 'GET', '/corridors/GBR')).body.map((c: { id: string }) => c.id).sort()).toEqual(['gbr-bank', 'global-usd-bank']);
  });

  it('answers an empty list for an unknown country', async () => {
    const answer = await call(sandbox, 'GET', '/corridors/XXX');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual([]);
  });

  it('creates a transaction and returns the full object [2.5], [D8]', async () => {
    const body = createBody('gbr', { output_amount_in_cents: '79120' });
    const created = await call(sandbox, 'POST', '/transactions', body);
    expect(created.status).toBe(201);
    const tx = created.body;
    expect(tx).toMatchObject({
      external_id: body.external_id,
      type: 'bank',
      state: 'approved',
      state_reason: null,
      input_currency: 'USD',
      input_amount_in_cents: '100000',
      output_currency: 'GBP',
      output_amount_in_cents: '79120',
      may_cancel: true,
      sender: { external_id: 'S-ADA', state: 'approved', first_name: 'Ada' },
      recipient: { sort_code: '089999', bank_account: '66374958' },
    });
    expect(tx.id).toMatch(/^tr_/);
    expect(Date.parse(tx.expires_at) - Date.parse(tx.created_at)).toBe(3_600_000);
    expect(tx.updated_at).toBe(tx.created_at);

    const read = await call(sandbox, 'GET', `/transactions/${tx.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(tx);
    const found = await call(sandbox, 'GET', `/transactions?external_id=${encodeURIComponent(String(body.external_id))}`);
    expect(found.body).toEqual([tx]);
  });

  it('answers 404 for an unknown transaction id and an unknown path', async () => {
    const unknownTx = await call(sandbox, 'GET', '/transactions/tr_missing');
    expect(unknownTx.status).toBe(404);
    expect(unknownTx.body.errors).toEqual(['transaction tr_missing not found']);
    expect((await call(sandbox, 'POST', '/transactions/tr_missing/fund')).status).toBe(404);
    expect((await call(sandbox, 'DELETE', '/transactions/tr_missing')).status).toBe(404);
    const unknownPath = await call(sandbox, 'GET', '/payments');
    expect(unknownPath.status).toBe(404);
    expect(unknownPath.body.errors[0]).toMatch(/no such path/);
    expect((await fetch(sandbox.url.replace('/v1', '/v2/transactions'))).status).toBe(404);
  });

  it('answers 405 with Allow for a wrong method', async () => {
    const answer = await call(sandbox, 'PUT', '/transactions', {});
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('POST, GET');
    expect(answer.body.errors[0]).toMatch(/PUT is not allowed/);
  });

  it('answers 400 for malformed JSON and for a lookup without external_id', async () => {
    const malformed = await call(sandbox, 'POST', '/transactions', undefined, { raw: '{"external_id": ' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors).toEqual(['the body is not valid JSON']);
    expect((await call(sandbox, 'GET', '/transactions')).status).toBe(400);
  });

  it('answers 413 for a body over the limit', async () => {
    const answer = await call(sandbox, 'POST', '/transactions', undefined, { raw: JSON.stringify({ pad: 'x'.repeat(5000) }) });
    expect(answer.status).toBe(413);
    expect(answer.body.errors[0]).toMatch(/larger than 4096 bytes/);
  });

  it('registers, lists and removes webhooks, one per event type [D13]', async () => {
    const registered = await call(sandbox, 'POST', '/webhooks', { event_type: 'transaction.paid', uri: 'http://127.0.0.1:9/hooks' });
    expect(registered.status).toBe(201);
    expect(registered.body).toEqual({ id: expect.stringMatching(/^wh_/), event_type: 'transaction.paid', uri: 'http://127.0.0.1:9/hooks' });
    const second = await call(sandbox, 'POST', '/webhooks', { event_type: 'transaction.paid', uri: 'http://127.0.0.1:9/other' });
    expect(second.status).toBe(422);
    expect(second.body.errors.event_type).toEqual(['already has a webhook registered']);
    const bad = await call(sandbox, 'POST', '/webhooks', { event_type: 'transaction.exploded', uri: 'ftp://x' });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['event_type', 'uri']);
    expect((await call(sandbox, 'GET', '/webhooks')).body).toEqual([registered.body]);
    expect((await call(sandbox, 'DELETE', `/webhooks/${registered.body.id}`)).status).toBe(204);
    expect((await call(sandbox, 'DELETE', `/webhooks/${registered.body.id}`)).status).toBe(404);
    expect((await call(sandbox, 'GET', '/webhooks')).body).toEqual([]);
  });

  it('wraps answers as {object, meta} in live style [D4]', async () => {
    const live = await testSandbox({ live_style: true });
    try {
      const corridors = await call(live, 'GET', '/corridors/GBR');
      expect(corridors.body.meta).toEqual({});
      expect(corridors.body.object.length).toBe(2);
      const invalid = await call(live, 'POST', '/transactions', { type: 'bank' });
      expect(invalid.status).toBe(422);
      expect(invalid.body.object.errors.external_id).toEqual(['is required']);
    } finally {
      await live.stop();
    }
  });

  it('keeps operator controls outside the signed interface', async () => {
    const balances = await operator(sandbox, 'GET', '/balances');
    expect(balances.status).toBe(200);
    expect(balances.body.USD).toMatch(/^\d+$/);
    expect((await operator(sandbox, 'GET', '/nothing')).status).toBe(404);
  });
});
