/** Format rules shared by sender and recipient fields [2.2], [2.3]. Pure functions. */
import { isIP } from 'node:net';
import countries from 'i18n-iso-countries';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { PhoneType } from './phone-type.js';
import { fastPhoneType } from './phone-type.js';
import { Memo } from './memo.js';

/** ISO 3166-1 alpha-3 to alpha-2, or undefined for a code that is not a country. */
export function alpha2Of(alpha3: string): string | undefined {
  return /^[A-Z]{3}$/.test(alpha3) ? countries.alpha3ToAlpha2(alpha3) : undefined;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** A real calendar date written YYYY-MM-DD (2023-02-29 is not one). Integer arithmetic: it runs for every row. */
export function isRealDate(text: string): boolean {
  if (text.length !== 10 || !/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const year = Number(text.slice(0, 4));
  const month = Number(text.slice(5, 7));
  const day = Number(text.slice(8, 10));
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return day <= (month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number));
}

const EMAIL = /^[^\s@"<>,;]+@[^\s@"<>,;]+\.[A-Za-z]{2,}$/;
export const isEmail = (text: string): boolean => text.length <= 254 && EMAIL.test(text);
export const isIpAddress = (text: string): boolean => isIP(text) !== 0;

/** libphonenumber's answer: from its rules with compiled patterns where that is exact, else from the library itself. */
function libraryFacts(e164: string): PhoneType {
  const fast = fastPhoneType(e164);
  if (fast) return fast;
  const parsed = parsePhoneNumberFromString(e164);
  // With full metadata, isValid() is getType() !== undefined: ask once, not twice.
  return { type: parsed?.getType(), country: parsed?.country };
}

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
const phoneCache = new Memo<string, PhoneFacts>(10_000);

/** `remember`: whether the number is likely to come again (a sender's), and so worth a place in the cache. */
export function phoneFacts(text: string, remember = true): PhoneFacts {
  const cached = remember ? phoneCache.get(text) : undefined;
  if (cached) return cached;
  const e164 = /^\+[1-9]\d{6,14}$/.test(text);
  const known = e164 ? libraryFacts(text) : { type: undefined, country: undefined };
  const valid = known.type !== undefined;
  const facts: PhoneFacts = { e164, valid, region: valid ? known.country : undefined, mobile: known.type === 'MOBILE' || known.type === 'FIXED_LINE_OR_MOBILE' };
  if (remember) phoneCache.set(text, facts);
  return facts;
}
