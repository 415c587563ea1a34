/**
 * A payout request as the store keeps it, compactly. Written as JSON with its
 * keys, a request was 589 bytes in a typical batch, 324 of them its keys:
 * every row of a million-row batch wrote the same keys again. Here a request
 * is a JSON array of its values in a fixed order, each key known by its place:
 *
 *   [1, external_id, type, input_currency_code, output_currency_code,
 *    output_amount_in_cents, [sender values...], [recipient values...]]
 *
 * The leading 1 is the encoding's version. A field the request leaves out is
 * 0 (a value is always a string), and those at the end are left off. A
 * request this cannot hold exactly (a key not listed here, a value not a
 * string, keys in another order) is kept as plain JSON, which is also how
 * every row stored before this encoding stands: `readRequest` reads both, the
 * first character telling them apart. Reading gives back the request as it
 * was built, keys in the same order, so that nothing downstream can tell.
 *
 * The lists below are stored data's schema: a key keeps its place forever. A
 * new field is appended at the end of its list, never inserted, and a field
 * dropped keeps its place (test/batch/request-text.test.ts holds them).
 */
import type { PayoutRequest } from '../api/payout-request.js';

const VERSION = 1;
const ABSENT = 0;

/** The request's own fields, in the order of the array after the version. */
const TOP_KEYS = ['external_id', 'type', 'input_currency_code', 'output_currency_code', 'output_amount_in_cents'] as const;

export const STORED_SENDER_KEYS: readonly string[] = [
  'external_id', 'type', 'first_name', 'last_name', 'birth_date', 'gender', 'identification_type', 'identification_number',
  'identification_expiry', 'country_code', 'city', 'street', 'postal_code', 'phone_number', 'email', 'ip',
];

export const STORED_RECIPIENT_KEYS: readonly string[] = [
  'type', 'first_name', 'last_name', 'birth_date', 'gender', 'country_code', 'city', 'street', 'postal_code', 'phone_number',
  'email', 'bank_name', 'bank_code', 'bank_account', 'bank_account_type', 'sort_code', 'iban', 'bic',
];

const SENDER_AT = 1 + TOP_KEYS.length;
const RECIPIENT_AT = SENDER_AT + 1;
const TOP_LENGTH = RECIPIENT_AT + 1;
/** The keys of a request built as JSON, in the order the compact form holds them (without its version). */
const OBJECT_KEYS: readonly string[] = [...TOP_KEYS, 'sender', 'recipient'];
const placesOf = (keys: readonly string[]): Map<string, number> => new Map(keys.map((key, at) => [key, at]));
const SENDER_PLACES = placesOf(STORED_SENDER_KEYS);
const RECIPIENT_PLACES = placesOf(STORED_RECIPIENT_KEYS);

/**
 * Where the store's SQL finds a field in the compact form (a path of array
 * places), for the few queries that look into requests (store/request-sql.ts).
 */
export const COMPACT_PLACES = {
  type: [1 + TOP_KEYS.indexOf('type')],
  recipientCountry: [RECIPIENT_AT, STORED_RECIPIENT_KEYS.indexOf('country_code')],
  senderExternalId: [SENDER_AT, STORED_SENDER_KEYS.indexOf('external_id')],
} as const;

/** The values of `object` in the places of `places`, or null when one of its keys has none, is not a string or is out of order. */
function valuesOf(object: unknown, places: Map<string, number>): (string | typeof ABSENT)[] | null {
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return null;
  const values: (string | typeof ABSENT)[] = [];
  for (const key in object) {
    const at = places.get(key);
    const value = (object as Record<string, unknown>)[key];
    if (at === undefined || at < values.length || typeof value !== 'string') return null;
    while (values.length < at) values.push(ABSENT);
    values.push(value);
  }
  return values;
}

/** The request as the store keeps it: compact where it can be held exactly, else plain JSON. */
export function requestText(request: PayoutRequest): string {
  const sender = valuesOf(request.sender, SENDER_PLACES);
  const recipient = valuesOf(request.recipient, RECIPIENT_PLACES);
  const keys = Object.keys(request);
  const inOrder = keys.length === OBJECT_KEYS.length && OBJECT_KEYS.every((key, at) => keys[at] === key)
    && TOP_KEYS.every((key) => typeof request[key] === 'string');
  if (!sender || !recipient || !inOrder) return JSON.stringify(request);
  return JSON.stringify([VERSION, ...TOP_KEYS.map((key) => request[key]), sender, recipient]);
}

const unreadable = (text: string): Error => new Error(`a stored request is not readable: ${text.slice(0, 40)}`);

function objectOf(values: unknown, keys: readonly string[], text: string): Record<string, string> {
  if (!Array.isArray(values) || values.length > keys.length) throw unreadable(text);
  const object: Record<string, string> = {};
  values.forEach((value, at) => {
    if (typeof value === 'string') object[keys[at] as string] = value;
    else if (value !== ABSENT) throw unreadable(text);
  });
  return object;
}

/** A stored request as it was built: compact or plain JSON (rows stored before the compact form, or not fit for it). */
export function readRequest(text: string): PayoutRequest {
  if (text.charCodeAt(0) !== 0x5b /* [ */) return JSON.parse(text) as PayoutRequest;
  const values = JSON.parse(text) as unknown[];
  if (values.length !== TOP_LENGTH || values[0] !== VERSION || !values.slice(1, SENDER_AT).every((v) => typeof v === 'string')) throw unreadable(text);
  const [, externalId, type, inputCurrency, outputCurrency, amount, sender, recipient] = values as [number, string, string, string, string, string, unknown, unknown];
  return {
    external_id: externalId, type, input_currency_code: inputCurrency, output_currency_code: outputCurrency, output_amount_in_cents: amount,
    sender: objectOf(sender, STORED_SENDER_KEYS, text), recipient: objectOf(recipient, STORED_RECIPIENT_KEYS, text),
  };
}
