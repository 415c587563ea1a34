import { describe, expect, it } from 'vitest';
import { amountFormat, csvField, csvText, instant, integer, major, MAX_CELL_TEXT, minor, sheetValue, text } from '../../src/reports/cells.js';

describe('report cells', () => {
  it('writes major units from the minor integer with the currency\'s decimals: 0 (JPY), 2 (USD, GBP, EUR, NGN), 3 (BHD, KWD)', () => {
    expect(csvText(major('125000', 'USD'))).toBe('1250.00');
    expect(csvText(major('7912', 'GBP'))).toBe('79.12');
    expect(csvText(major('5', 'EUR'))).toBe('0.05');
    expect(csvText(major('125000', 'NGN'))).toBe('1250.00');
    expect(csvText(major('125000', 'JPY'))).toBe('125000');
    expect(csvText(major('1250005', 'BHD'))).toBe('1250.005');
    expect(csvText(major('7', 'KWD'))).toBe('0.007');
    expect(csvText(major(-10000n, 'USD'))).toBe('-100.00');
    // The largest amount the service takes: exact, no float on the way.
    expect(csvText(major('999999999999999999', 'USD'))).toBe('9999999999999999.99');
    expect(csvText(major('125005', 'USD'), { decimalComma: true })).toBe('1250,05');
    expect(csvText(major(null, 'USD'))).toBe('');
    expect(csvText(major('', 'USD'))).toBe('');
  });

  it('shows a stored amount that is not an integer as it is, never guessed at', () => {
    expect(csvText(major('12.5', 'USD'))).toBe('12.5');
    expect(sheetValue(minor('12x'))).toEqual({ value: '12x', numFmt: null });
  });

  it('types spreadsheet cells: amounts as numbers with the currency\'s format, minor units as integers, times as dates', () => {
    expect(sheetValue(major('125005', 'USD'))).toEqual({ value: 1250.05, numFmt: '#,##0.00' });
    expect(sheetValue(major('125000', 'JPY'))).toEqual({ value: 125000, numFmt: '#,##0' });
    expect(sheetValue(major('1250005', 'BHD'))).toEqual({ value: 1250.005, numFmt: '#,##0.000' });
    expect(sheetValue(major(-10000n, 'USD'))).toEqual({ value: -100, numFmt: '#,##0.00' });
    expect(sheetValue(minor('125005'))).toEqual({ value: 125005, numFmt: '0' });
    expect(sheetValue(integer(7))).toEqual({ value: 7, numFmt: '0' });
    expect(sheetValue(instant('2026-03-02T09:30:15.250Z'))).toEqual({ value: new Date('2026-03-02T09:30:15.250Z'), numFmt: 'yyyy-mm-dd hh:mm:ss' });
    expect(sheetValue(instant('not a time'))).toEqual({ value: 'not a time', numFmt: null });
    expect(sheetValue(text('GBP'))).toEqual({ value: 'GBP', numFmt: null });
    expect(sheetValue(text(''))).toBeNull();
    expect([0, 2, 3].map(amountFormat)).toEqual(['#,##0', '#,##0.00', '#,##0.000']);
  });

  it('writes an amount of more than 15 digits as exact text in both columns: Excel would round it', () => {
    // 9007199254740991 is 2^53 - 1, exact as a double, but Excel shows 9007199254740990.
    expect(sheetValue(minor('9007199254740991'))).toEqual({ value: '9007199254740991', numFmt: null });
    expect(sheetValue(major('9007199254740991', 'USD'))).toEqual({ value: '90071992547409.91', numFmt: null });
    expect(sheetValue(minor('999999999999999'))).toEqual({ value: 999999999999999, numFmt: '0' });
    expect(sheetValue(major('999999999999999', 'USD'))).toEqual({ value: 9999999999999.99, numFmt: '#,##0.00' });
  });

  it('neutralises formula text in CSV and in spreadsheet cells alike, but not numbers', () => {
    for (const value of ['=HYPERLINK("http://x","y")', '+SUM(A1:A9)', '-2+3', '@cmd']) {
      expect(csvField(text(value))).toBe(`'${value}`);
      expect(sheetValue(text(value))).toEqual({ value: `'${value}`, numFmt: null });
    }
    expect(csvField(text('-12.50'))).toBe('-12.50');
    expect(sheetValue(text('+2348031234567'))?.value).toBe('+2348031234567');
  });

  it('keeps spreadsheet text well-formed and within a cell', () => {
    expect(sheetValue(text('a\uD800b'))?.value).toBe('a\uFFFDb');
    expect(sheetValue(text('ok \uD83D\uDE00'))?.value).toBe('ok \uD83D\uDE00');
    const long = sheetValue(text('x'.repeat(MAX_CELL_TEXT + 10)))?.value as string;
    expect(long).toHaveLength(MAX_CELL_TEXT);
    expect(long.endsWith('…')).toBe(true);
  });
});
