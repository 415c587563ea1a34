/**
 * [6], [D3], [D14] Reading a webhook delivery: who signed it, and what it says.
 * Pure functions; the receiver does the I/O.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { requestSignature } from '../api/signing.js';
import type { Credentials } from '../api/signing.js';
import { EVENT_TYPES } from '../api/states.js';

export interface DeliveryHeaders {
  key: string | undefined;
  nonce: string | undefined;
  signature: string | undefined;
}

/** Equal strings, compared in time that depends on neither: both are hashed first. */
function sameSecretly(a: string, b: string): boolean {
  const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** The service's API key, compared in constant time. */
export function sameKey(given: string, apiKey: string): boolean {
  return sameSecretly(given, apiKey);
}

/**
 * [D3] Null when the delivery is signed by the service: its key, and an HMAC over
 * `nonce & POST & registered URI & sha512hex(raw body)`. Otherwise why not (the
 * reason is for the log; the sender only learns 401).
 */
export function signatureProblem(headers: DeliveryHeaders, rawBody: Buffer, uri: string, credentials: Credentials): string | null {
  if (!headers.key || !headers.nonce || !headers.signature) return 'an authentication header is missing';
  // Both checks run whatever the first found, so timing tells a forger nothing.
  const keyOk = sameSecretly(headers.key, credentials.apiKey);
  const signatureOk = sameSecretly(headers.signature.toLowerCase(), requestSignature(credentials.apiSecret, headers.nonce, 'POST', uri, rawBody));
  if (!keyOk) return 'unknown key';
  if (!signatureOk) return 'the signature does not match';
  return null;
}

export interface Delivery {
  webhookId: string | null;
  eventType: string;
  /** The object the event happened on: a transaction or a sender. */
  data: Record<string, unknown>;
  /** The object's id, when it has one. */
  objectId: string | null;
  known: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** [D14] Both spellings: `webhook_id`/`event_type`/`data` and the live `webhook`/`event`/`object`. */
export function parseDelivery(body: unknown): Delivery | string {
  if (!isObject(body)) return 'the body is not a JSON object';
  const eventType = body.event_type ?? body.event;
  const data = body.data ?? body.object;
  if (typeof eventType !== 'string' || eventType.length === 0 || eventType.length > 100) return 'the body has no event_type (or event)';
  if (!isObject(data)) return 'the body has no data (or object)';
  const webhookId = body.webhook_id ?? body.webhook;
  return {
    webhookId: typeof webhookId === 'string' ? webhookId : null,
    eventType,
    data,
    objectId: typeof data.id === 'string' ? data.id : null,
    known: EVENT_TYPES.includes(eventType),
  };
}
