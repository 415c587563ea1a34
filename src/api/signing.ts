/**
 * [D2] The client's side of request signing: every request to the service
 * carries the API key, a fresh nonce and an HMAC-SHA512 signature of
 * `nonce & METHOD & full URL as sent & sha512hex(body)`, keyed with the secret.
 */
import { createHmac, hash, randomUUID } from 'node:crypto';

export interface Credentials {
  apiKey: string;
  apiSecret: string;
}

export function requestSignature(secret: string, nonce: string, method: string, url: string, body: string | Buffer): string {
  const bodyHash = hash('sha512', body, 'hex');
  const stringToSign = [nonce, method.toUpperCase(), url, bodyHash].join('&');
  return createHmac('sha512', secret).update(stringToSign).digest('hex');
}

export function authHeaders(credentials: Credentials, method: string, url: string, body: string | Buffer = ''): Record<string, string> {
  const nonce = randomUUID();
  return {
    'authorization-key': credentials.apiKey,
    'authorization-nonce': nonce,
    'authorization-signature': requestSignature(credentials.apiSecret, nonce, method, url, body),
  };
}
