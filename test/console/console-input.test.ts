/** Pure pieces the console relies on: ceilings compared whatever their key order, URL credentials left out of pages, odd form values. */
import { describe, expect, it } from 'vitest';
import { withoutUrlCredentials } from '../../src/api/redact.js';
import { sameCeiling } from '../../src/approvals/verify.js';
import { strings } from '../../src/console/routes.js';

describe('what the console is given', () => {
  it('a ceiling is the same whatever the order of its currencies, and not when an amount or a currency differs', () => {
    expect(sameCeiling({ USD: '200000', EUR: '265739' }, { EUR: '265739', USD: '200000' })).toBe(true);
    expect(sameCeiling({ USD: '200000' }, { USD: '200001' })).toBe(false);
    expect(sameCeiling({ USD: '200000' }, { USD: '200000', EUR: '1' })).toBe(false);
  });

  it('a URL\'s user and password never reach a page', () => {
    expect(withoutUrlCredentials('"base_url": "https://payuser:hunter2@api.example/v1"')).toBe('"base_url": "https://[redacted]@api.example/v1"');
    expect(withoutUrlCredentials('http://127.0.0.1:8080/_sandbox/ledger')).toBe('http://127.0.0.1:8080/_sandbox/ledger');
  });

  it('a repeated or non-text form value counts as absent', () => {
    expect(strings({ name: ['a', 'b'], code: 'X', n: 42 })).toEqual({ code: 'X' });
    expect(strings(undefined)).toEqual({});
  });
});
