/**
 * [D3] The signed webhook: signed the way the payout service signs its own
 * deliveries, so a receiver verifies it the same way. `Authorization-Key` names
 * the key, `Authorization-Nonce` is fresh for every attempt (a receiver refuses
 * a nonce it has already accepted), and `Authorization-Signature` is the
 * HMAC-SHA512 of `nonce & POST & URL & sha512hex(body)` keyed with the secret,
 * over the exact bytes sent.
 */
import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { requestSignature } from '../../api/signing.js';
import { webhookBody } from '../render.js';
import { postJson } from './http.js';
import type { Sender } from './sender.js';

export interface WebhookTarget {
  url: string;
  keyId: string;
  secret: string;
  timeoutMs: number;
}

/** The headers that sign `body` for `url`; the URL is signed as sent (WHATWG-normalised, as undici sends it). */
export function signedHeaders(target: Pick<WebhookTarget, 'keyId' | 'secret'>, url: string, body: string, nonce: string = randomUUID()): Record<string, string> {
  return {
    'authorization-key': target.keyId,
    'authorization-nonce': nonce,
    'authorization-signature': requestSignature(target.secret, nonce, 'POST', url, body),
  };
}

export function webhookSender(target: WebhookTarget, dispatcher: Dispatcher): Sender {
  const url = new URL(target.url).href;
  return {
    async send(notification, stop) {
      const body = webhookBody(notification);
      await postJson(dispatcher, url, body, signedHeaders(target, url, body), target.timeoutMs, stop);
    },
    close: async () => {},
  };
}
