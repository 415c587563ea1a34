/**
 * [D2], [D3] The service's side of request signing: it verifies what clients
 * send and signs what it delivers. HMAC-SHA512 keyed with the API secret over
 * `nonce & METHOD & full URL & sha512hex(body)`.
 */
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';

export function signatureFor(secret: string, nonce: string, method: string, url: string, body: Buffer | string): string {
  const bodyHash = createHash('sha512').update(body).digest('hex');
  return createHmac('sha512', secret).update(`${nonce}&${method.toUpperCase()}&${url}&${bodyHash}`).digest('hex');
}

/** Compares in constant time, so a forger learns nothing from how long a refusal took. */
export function signaturesMatch(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

export function signedHeaders(key: string, secret: string, method: string, url: string, body: Buffer | string): Record<string, string> {
  const nonce = randomUUID();
  return {
    'Authorization-Key': key,
    'Authorization-Nonce': nonce,
    'Authorization-Signature': signatureFor(secret, nonce, method, url, body),
  };
}
