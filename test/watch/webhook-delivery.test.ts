import { describe, expect, it } from 'vitest';
import { requestSignature } from '../../src/api/signing.js';
import { parseDelivery, signatureProblem } from '../../src/watch/webhook-delivery.js';

const credentials = { apiKey: 'key-1', apiSecret: 'secret-1' };
const uri = 'http://127.0.0.1:8787/webhooks';
const body = Buffer.from('{"webhook_id":"wh_1","event_type":"transaction.paid","data":{"id":"tr_1"}}');
const signed = (over: Buffer, nonce = 'n-1', secret = credentials.apiSecret, at = uri) => ({ key: 'key-1', nonce, signature: requestSignature(secret, nonce, 'POST', at, over) });

describe('[D3] webhook signatures', () => {
  it('accepts a delivery signed over its raw body and the registered URI', () => {
    expect(signatureProblem(signed(body), body, uri, credentials)).toBeNull();
  });

  it('refuses a missing header, a wrong key, another secret, another URI and a body changed by one byte', () => {
    expect(signatureProblem({ ...signed(body), signature: undefined }, body, uri, credentials)).toMatch(/missing/);
    expect(signatureProblem({ ...signed(body), key: 'key-2' }, body, uri, credentials)).toMatch(/unknown key/);
    expect(signatureProblem(signed(body, 'n-1', 'other-secret'), body, uri, credentials)).toMatch(/does not match/);
    expect(signatureProblem(signed(body, 'n-1', credentials.apiSecret, 'http://evil.example/webhooks'), body, uri, credentials)).toMatch(/does not match/);
    const changed = Buffer.from(body.toString().replace('tr_1', 'tr_2'));
    expect(signatureProblem(signed(body), changed, uri, credentials)).toMatch(/does not match/);
  });

  it('checks the raw bytes, not re-serialised JSON: the same object spaced differently does not match', () => {
    const spaced = Buffer.from(JSON.stringify(JSON.parse(body.toString()), null, 1));
    expect(signatureProblem(signed(body), spaced, uri, credentials)).toMatch(/does not match/);
  });
});

describe('[D14] webhook bodies', () => {
  it('reads both spellings', () => {
    expect(parseDelivery({ webhook_id: 'wh_1', event_type: 'transaction.paid', data: { id: 'tr_1', state: 'paid' } }))
      .toMatchObject({ webhookId: 'wh_1', eventType: 'transaction.paid', objectId: 'tr_1', known: true });
    expect(parseDelivery({ webhook: 'wh_2', event: 'sender.approved', object: { id: 'sd_1' } }))
      .toMatchObject({ webhookId: 'wh_2', eventType: 'sender.approved', objectId: 'sd_1', known: true });
  });

  it('marks an event type the interface does not name as unknown, and refuses bodies that are not deliveries', () => {
    expect(parseDelivery({ event_type: 'transaction.teleported', data: {} })).toMatchObject({ known: false });
    expect(parseDelivery([1, 2])).toMatch(/not a JSON object/);
    expect(parseDelivery({ data: {} })).toMatch(/no event_type/);
    expect(parseDelivery({ event_type: 'transaction.paid' })).toMatch(/no data/);
  });
});
