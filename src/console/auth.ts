/**
 * Signing in to the console: `paybatch console login NAME` gives a person a
 * one-time code (it lasts console.code_ms), which they type in with their name;
 * the console then sets a session cookie (console.session_ms). Codes and
 * sessions are kept only as SHA-256 hashes, so the database never holds one
 * that could be used; a code is used once.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { ConsoleStore } from '../store/port.js';

export const hashSecret = (secret: string): string => createHash('sha256').update(secret, 'utf8').digest('hex');

/** Ten characters of an alphabet with no look-alikes (no 0/O, 1/I/L), grouped for reading aloud: 50 bits. */
const ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
function newCode(): string {
  const bytes = randomBytes(10);
  const chars = [...bytes].map((b) => ALPHABET[b % ALPHABET.length] as string).join('');
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

/** A code as typed: case, spaces and dashes do not matter. */
const normalise = (code: string): string => {
  const plain = code.toUpperCase().replace(/[\s-]/g, '');
  return plain.length === 10 ? `${plain.slice(0, 5)}-${plain.slice(5)}` : plain;
};

/** A one-time code for `person`, valid for `ttlMs`. */
export async function issueCode(store: ConsoleStore, person: string, clock: Clock, ttlMs: number): Promise<{ code: string; expiresAt: number }> {
  const code = newCode();
  const now = clock.now();
  await store.addConsoleCredential({ hash: hashSecret(code), kind: 'code', person, created_at: now, expires_at: now + ttlMs });
  return { code, expiresAt: now + ttlMs };
}

const sameText = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** Signs `person` in with their code: a new session token, or null (unknown, used, expired, or someone else's code). */
export async function signIn(store: ConsoleStore, person: string, code: string, clock: Clock, sessionMs: number): Promise<string | null> {
  const hash = hashSecret(normalise(code));
  const now = clock.now();
  const found = await store.consoleCredential(hash, now);
  if (!found || found.kind !== 'code' || !sameText(found.person, person)) return null;
  if (!(await store.useConsoleCode(hash, now))) return null;
  const token = randomBytes(32).toString('base64url');
  await store.addConsoleCredential({ hash: hashSecret(token), kind: 'session', person, created_at: now, expires_at: now + sessionMs });
  return token;
}

/** Who a session token belongs to, while it lasts. */
export async function sessionPerson(store: ConsoleStore, token: string | undefined, clock: Clock): Promise<string | null> {
  if (!token || token.length > 100) return null;
  const found = await store.consoleCredential(hashSecret(token), clock.now());
  return found?.kind === 'session' ? found.person : null;
}

export async function signOut(store: ConsoleStore, token: string | undefined): Promise<void> {
  if (token) await store.deleteConsoleCredential(hashSecret(token));
}
