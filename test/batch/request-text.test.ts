/**
 * The compact form of a stored request (src/batch/request-text.ts): every
 * request paybatch builds reads back exactly as built (the same JSON, keys in
 * the same order), in a fraction of the bytes; what it cannot hold exactly is
 * kept as plain JSON, and rows stored as plain JSON still read.
 */
import { describe, expect, it } from 'vitest';
import { toPayoutRequest } from '../../src/batch/payout-request.js';
import { STORED_RECIPIENT_KEYS, STORED_SENDER_KEYS, readRequest, requestText } from '../../src/batch/request-text.js';
import { RECIPIENT_FIELDS, SENDER_FIELDS } from '../../src/validate/fields.js';
import type { PayoutRequest } from '../../src/api/payout-request.js';
import type { RowCorridor } from '../helpers/rows.js';
import { validRow } from '../helpers/rows.js';

const CORRIDORS: RowCorridor[] = ['gbr', 'eur', 'global', 'ngaBank', 'ngaCash'];
const built = (corridor: RowCorridor, overrides: Record<string, string> = {}): PayoutRequest =>
  toPayoutRequest(validRow(corridor, overrides), 123_456_789_012_345_678n);

describe('a stored request', () => {
  it.each(CORRIDORS)('of the %s corridor reads back as built, in about half the bytes', (corridor) => {
    const request = built(corridor, { sender_email: 'ada@example.com', sender_ip: '192.0.2.1', recipient_email: 'r@example.com' });
    const text = requestText(request);
    expect(text.startsWith('[1,')).toBe(true);
    expect(JSON.stringify(readRequest(text))).toBe(JSON.stringify(request));
    expect(text.length).toBeLessThan(JSON.stringify(request).length * 0.65);
  });

  it('holds every field a row can fill, each in its own place, with quotes, commas and other scripts in its values', () => {
    const every = Object.fromEntries([...SENDER_FIELDS, ...RECIPIENT_FIELDS].map((field, at) => [field, `v${at} "q", \\ \u00e9\u4e2d\u{1F600}`]));
    const request = built('gbr', every);
    expect(Object.keys(request.sender)).toHaveLength(SENDER_FIELDS.length);
    expect(Object.keys(request.recipient)).toHaveLength(RECIPIENT_FIELDS.length);
    const text = requestText(request);
    expect(text.startsWith('[')).toBe(true);
    expect(JSON.stringify(readRequest(text))).toBe(JSON.stringify(request));
  });

  it('keeps each key in its place for good: a new field is appended, never inserted', () => {
    // Stored data's schema: changing these lists misreads every row already stored.
    expect(STORED_SENDER_KEYS).toEqual(['external_id', 'type', 'first_name', 'last_name', 'birth_date', 'gender', 'identification_type',
      'identification_number', 'identification_expiry', 'country_code', 'city', 'street', 'postal_code', 'phone_number', 'email', 'ip']);
    expect(STORED_RECIPIENT_KEYS).toEqual(['type', 'first_name', 'last_name', 'birth_date', 'gender', 'country_code', 'city', 'street',
      'postal_code', 'phone_number', 'email', 'bank_name', 'bank_code', 'bank_account', 'bank_account_type', 'sort_code', 'iban', 'bic']);
    // Every field a row can send has a place (else its requests fall back to plain JSON, correct but large).
    for (const field of SENDER_FIELDS) expect(STORED_SENDER_KEYS).toContain(field.slice('sender_'.length));
    for (const field of RECIPIENT_FIELDS) expect(STORED_RECIPIENT_KEYS).toContain(field.slice('recipient_'.length));
  });

  it('that the compact form cannot hold exactly is kept as plain JSON, and reads back the same', () => {
    const base = built('gbr');
    const odd: PayoutRequest[] = [
      { ...base, recipient: { ...base.recipient, nickname: 'x' } },
      { ...base, sender: { ...base.sender, type: 7 as unknown as string } },
      { ...base, recipient: { sort_code: '089999', type: 'person' } },
      { ...base, extra: 'x' } as PayoutRequest,
      Object.fromEntries([['type', base.type], ...Object.entries(base).filter(([key]) => key !== 'type')]) as unknown as PayoutRequest,
      { ...base, output_amount_in_cents: 100 as unknown as string },
    ];
    for (const request of odd) {
      const text = requestText(request);
      expect(text.startsWith('{')).toBe(true);
      expect(readRequest(text)).toEqual(request);
    }
  });

  it('stored as plain JSON before the compact form reads as it did', () => {
    const request = built('eur');
    expect(readRequest(JSON.stringify(request))).toEqual(request);
  });

  it('an empty value stays an empty value, not an absent field', () => {
    const base = built('ngaCash');
    const request = { ...base, recipient: { ...base.recipient, city: '' } };
    expect(readRequest(requestText(request)).recipient).toHaveProperty('city', '');
  });

  it('a compact text that is not one paybatch wrote is refused, not misread', () => {
    const text = requestText(built('gbr'));
    for (const bad of [text.replace('[1,', '[2,'), '[1,"a"]', text.replace(/\]\]$/, ',"x","y","z","w","v","u","t","s","r","q","p","o","n","m","l","k","j","i","h"]]'),
      text.replace(/"current"/, 'null'), text.replace('[1,"T-1"', '[1,5')]) {
      expect(() => readRequest(bad)).toThrow(/not readable/);
    }
  });
});
