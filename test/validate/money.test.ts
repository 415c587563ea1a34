import { describe, expect, it } from 'vitest';
import { currencyDecimals, formatMinor, parseMajorAmount, parseMinorAmount } from '../../src/validate/money.js';

describe('money in minor units', () => {
  it('knows ISO 4217 decimals', () => {
    expect(currencyDecimals('JPY')).toBe(0);
    expect(currencyDecimals('KWD')).toBe(3);
    expect(currencyDecimals('GBP')).toBe(2);
    expect(currencyDecimals('NGN')).toBe(2);
    expect(currencyDecimals('XYZ')).toBeUndefined();
    expect(currencyDecimals('usd')).toBeUndefined();
  });

  it('converts decimal strings exactly, without floating point', () => {
    expect(parseMajorAmount('1234.56', 2)).toEqual({ ok: true, minor: 123456n });
    expect(parseMajorAmount('0.29', 2)).toEqual({ ok: true, minor: 29n }); // 0.29 * 100 is 28.999999999999996 in floating point
    expect(parseMajorAmount('1.005', 3)).toEqual({ ok: true, minor: 1005n });
    expect(parseMajorAmount('1500', 0)).toEqual({ ok: true, minor: 1500n });
    expect(parseMajorAmount('12', 2)).toEqual({ ok: true, minor: 1200n });
    expect(parseMajorAmount('12.5', 2)).toEqual({ ok: true, minor: 1250n });
    expect(parseMajorAmount('999999999999999999.99', 2)).toEqual({ ok: false, code: 'amount_too_large', message: expect.any(String) });
    expect(parseMajorAmount('90071992547409.93', 2)).toEqual({ ok: true, minor: 9007199254740993n }); // beyond 2^53
  });

  it('accepts trailing zeros beyond the decimals, refuses any other extra digit', () => {
    expect(parseMajorAmount('12.300', 2)).toEqual({ ok: true, minor: 1230n });
    expect(parseMajorAmount('12.345', 2)).toMatchObject({ ok: false, code: 'amount_too_precise' });
    expect(parseMajorAmount('1500.5', 0)).toMatchObject({ ok: false, code: 'amount_too_precise' });
    expect(parseMajorAmount('1.0001', 3)).toMatchObject({ ok: false, code: 'amount_too_precise' });
  });

  it('refuses zero, negatives, signs, exponents, thousands separators and currency symbols', () => {
    for (const text of ['0', '0.00']) expect(parseMajorAmount(text, 2)).toMatchObject({ ok: false, code: 'amount_not_positive' });
    expect(parseMajorAmount('-5.00', 2)).toMatchObject({ ok: false, code: 'amount_not_positive' });
    for (const text of ['+5', '1e3', '1,234.56', '£12', '12.', '.5', '', ' 1']) {
      expect(parseMajorAmount(text, 2), text).toMatchObject({ ok: false, code: 'amount_invalid' });
    }
    expect((parseMajorAmount('12,50', 2) as { message: string }).message).toMatch(/decimal separator is "\."/);
  });

  it('reads a decimal comma when configured', () => {
    expect(parseMajorAmount('1234,56', 2, ',')).toEqual({ ok: true, minor: 123456n });
    expect(parseMajorAmount('1234.56', 2, ',')).toMatchObject({ ok: false, code: 'amount_invalid' });
  });

  it('reads minor units as whole positive numbers only', () => {
    expect(parseMinorAmount('123456')).toEqual({ ok: true, minor: 123456n });
    expect(parseMinorAmount('0')).toMatchObject({ ok: false, code: 'amount_not_positive' });
    for (const text of ['12.5', '-1', '1e5', '1234567890123456789']) expect(parseMinorAmount(text), text).toMatchObject({ ok: false, code: 'amount_invalid' });
  });

  it('formats minor units back exactly', () => {
    expect(formatMinor(123456n, 2)).toBe('1234.56');
    expect(formatMinor(5n, 2)).toBe('0.05');
    expect(formatMinor(1500n, 0)).toBe('1500');
    expect(formatMinor(1005n, 3)).toBe('1.005');
    expect(formatMinor(-250n, 2)).toBe('-2.50');
  });
});
