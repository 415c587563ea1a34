/** Format rules shared by sender and recipient fields [2.2], [2.3]. Pure functions. */
import { isIP } from 'node:net';
import countries from 'i18n-iso-countries';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/** ISO 3166-1 alpha-3 to alpha-2, or undefined for a code that is not a country. */
export function alpha2Of(alpha3: string): string | undefined {
  return /^[A-Z]{3}$/.test(alpha3) ? countries.alpha3ToAlpha2(alpha3) : undefined;
}

/** A real calendar date written YYYY-MM-DD (2023-02-29 is not one). */
export function isRealDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text;
}

const EMAIL = /^[^\s@"<>,;]+@[^\s@"<>,;]+\.[A-Za-z]{2,}$/;
export const isEmail = (text: string): boolean => text.length <= 254 && EMAIL.test(text);
export const isIpAddress = (text: string): boolean => isIP(text) !== 0;

export interface PhoneFacts {
  e164: boolean;
  valid: boolean;
  /** ISO 3166-1 alpha-2 of the number, when libphonenumber knows it. */
  region: string | undefined;
  mobile: boolean;
}

/**
 * Parsing a phone number with full metadata costs microseconds, and senders
 * repeat across a batch, so answers are remembered (a bounded cache).
 */
const phoneCache = new Map<string, PhoneFacts>();
const PHONE_CACHE_LIMIT = 100_000;

export function phoneFacts(text: string): PhoneFacts {
  const cached = phoneCache.get(text);
  if (cached) return cached;
  const e164 = /^\+[1-9]\d{6,14}$/.test(text);
  const parsed = e164 ? parsePhoneNumberFromString(text) : undefined;
  const valid = parsed?.isValid() ?? false;
  const type = valid ? parsed?.getType() : undefined;
  const facts: PhoneFacts = { e164, valid, region: valid ? parsed?.country : undefined, mobile: type === 'MOBILE' || type === 'FIXED_LINE_OR_MOBILE' };
  if (phoneCache.size >= PHONE_CACHE_LIMIT) phoneCache.clear();
  phoneCache.set(text, facts);
  return facts;
}
