/** The one formatter for money a person reads: exact, thousands separated, in the currency's own decimals. */
import { describe, expect, it } from 'vitest';
import { formatMoney, formatMoneyAndMinor, formatMoneyMap } from '../../src/validate/money.js';

describe('formatMoney', () => {
  it('shows minor units as major units with thousands separators and the currency code', () => {
    expect(formatMoney(197226n, 'USD')).toBe('1,972.26 USD');
    expect(formatMoney('9999999999', 'GBP')).toBe('99,999,999.99 GBP');
    expect(formatMoney('100000', 'GBP')).toBe('1,000.00 GBP');
    expect(formatMoney('5', 'EUR')).toBe('0.05 EUR');
    expect(formatMoney('0', 'EUR')).toBe('0.00 EUR');
    expect(formatMoney(-10000n, 'USD')).toBe('-100.00 USD');
  });

  it('uses each currency\'s exponent: JPY 0, KWD and BHD 3', () => {
    expect(formatMoney('1500000', 'JPY')).toBe('1,500,000 JPY');
    expect(formatMoney('1234', 'KWD')).toBe('1.234 KWD');
    expect(formatMoney('1234567', 'BHD')).toBe('1,234.567 BHD');
    expect(formatMoney('7', 'BHD')).toBe('0.007 BHD');
  });

  it('is exact beyond what a float can hold', () => {
    // 2^53 + 1 minor units: a float would print ...992.
    expect(formatMoney('9007199254740993', 'USD')).toBe('90,071,992,547,409.93 USD');
    expect(formatMoney(999_999_999_999_999_999n, 'GBP')).toBe('9,999,999,999,999,999.99 GBP');
  });

  it('shows a value that is not a whole number as it is, never a guess', () => {
    expect(formatMoney('12.5', 'USD')).toBe('12.5 USD');
    expect(formatMoney('007', 'USD')).toBe('0.07 USD');
  });

  it('joins a map, and puts major units beside the minor units a statement carries', () => {
    expect(formatMoneyMap({ GBP: '150000', USD: 2500n })).toBe('1,500.00 GBP, 25.00 USD');
    expect(formatMoneyMap(new Map([['JPY', 1000n]]))).toBe('1,000 JPY');
    expect(formatMoneyAndMinor('3182', 'USD')).toBe('31.82 USD (3182 in minor units)');
  });
});
