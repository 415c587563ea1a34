/**
 * Phone number types by libphonenumber's own metadata and rules, with each
 * pattern compiled once. libphonenumber-js builds a new RegExp from the pattern
 * text on every match; for the UK the patterns run to kilobytes, which made phone
 * checks the largest cost of validating a batch.
 *
 * This follows getCountryByCallingCode and getNumberType exactly, and only for
 * numbers where parsing cannot strip a national prefix. Anything else, it
 * declines (returns null) and the caller asks libphonenumber itself. A test
 * checks that both agree on thousands of numbers of every country.
 */
import { Metadata } from 'libphonenumber-js/core';
import type { MetadataJson } from 'libphonenumber-js/core';
// The package maps this path to a JavaScript module exporting the metadata (not a JSON import).
import metadataJson from 'libphonenumber-js/metadata.max.json';

/** The parts of libphonenumber's runtime metadata API that its typings leave out. */
interface TypeDefinition {
  pattern(): string;
  possibleLengths(): number[] | undefined;
}
interface NumberingPlan {
  leadingDigits(): string | undefined;
  nationalNumberPattern(): string;
  nationalPrefixForParsing(): string | undefined;
  type(type: string): TypeDefinition | undefined;
}
interface RuntimeMetadata {
  selectNumberingPlan(country: string): void;
  numberingPlan: NumberingPlan;
  getCountryCodesForCallingCode(callingCode: string): string[] | undefined;
}

const metadata = new Metadata(metadataJson as unknown as MetadataJson) as unknown as RuntimeMetadata;

/**
 * Keyed by the metadata's own pattern strings, which are the same string objects
 * every time (V8 keeps their hash): no per-call concatenation of kilobytes.
 */
const wholeMatchers = new Map<string, RegExp>();
const prefixMatchers = new Map<string, RegExp>();

function matcher(cache: Map<string, RegExp>, pattern: string, whole: boolean): RegExp {
  let re = cache.get(pattern);
  if (!re) {
    re = new RegExp(whole ? `^(?:${pattern})$` : `^(?:${pattern})`);
    cache.set(pattern, re);
  }
  return re;
}
const matchesEntirely = (text: string, pattern: string): boolean => matcher(wholeMatchers, pattern, true).test(text);
const startsWith = (text: string, pattern: string): boolean => matcher(prefixMatchers, pattern, false).test(text);

const NON_FIXED_LINE_TYPES = ['MOBILE', 'PREMIUM_RATE', 'TOLL_FREE', 'SHARED_COST', 'VOIP', 'PERSONAL_NUMBER', 'PAGER', 'UAN', 'VOICEMAIL'];

function isType(national: string, type: string, plan: NumberingPlan): boolean {
  const definition = plan.type(type);
  if (!definition || !definition.pattern()) return false;
  const lengths = definition.possibleLengths();
  if (lengths && !lengths.includes(national.length)) return false;
  return matchesEntirely(national, definition.pattern());
}

/** libphonenumber's getNumberType, for a national number in a country. */
function numberType(national: string, country: string): string | undefined {
  metadata.selectNumberingPlan(country);
  const plan = metadata.numberingPlan;
  if (!matchesEntirely(national, plan.nationalNumberPattern())) return undefined;
  if (isType(national, 'FIXED_LINE', plan)) {
    const mobile = plan.type('MOBILE');
    if (!mobile || mobile.pattern() === '') return 'FIXED_LINE_OR_MOBILE';
    return isType(national, 'MOBILE', plan) ? 'FIXED_LINE_OR_MOBILE' : 'FIXED_LINE';
  }
  return NON_FIXED_LINE_TYPES.find((type) => isType(national, type, plan));
}

/** libphonenumber's getCountryByCallingCode. */
function countryOf(national: string, countries: readonly string[]): string | undefined {
  if (countries.length === 1) return countries[0];
  for (const country of countries) {
    metadata.selectNumberingPlan(country);
    const leading = metadata.numberingPlan.leadingDigits();
    if (leading) {
      if (startsWith(national, leading)) return country;
    } else if (numberType(national, country)) {
      return country;
    }
  }
  return undefined;
}

export interface PhoneType {
  /** ISO 3166-1 alpha-2, when the number belongs to one country. */
  country: string | undefined;
  /** libphonenumber's type (MOBILE, FIXED_LINE, ...), undefined for an invalid number. */
  type: string | undefined;
}

/** The type of an E.164 number ("+" and digits), or null where libphonenumber itself must decide. */
export function fastPhoneType(e164: string): PhoneType | null {
  for (let length = 1; length <= 3; length++) {
    const callingCode = e164.slice(1, 1 + length);
    const countries = metadata.getCountryCodesForCallingCode(callingCode);
    if (!countries || countries.length === 0) continue;
    const national = e164.slice(1 + length);
    metadata.selectNumberingPlan(countries[0] as string);
    const prefix = metadata.numberingPlan.nationalPrefixForParsing();
    if (prefix && startsWith(national, prefix)) return null; // parsing might strip it: not ours to decide
    const country = countryOf(national, countries);
    return { country, type: numberType(national, country ?? (countries[0] as string)) };
  }
  return null;
}
