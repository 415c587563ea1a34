/** COPY's text format (src/store/postgres/copy-text.ts): user text can never split a column or a row, nor read as NULL. */
import { describe, expect, it } from 'vitest';
import { copyField, copyLine } from '../../src/store/postgres/copy-text.js';

describe("COPY's text format", () => {
  it('writes NULL as \\N, and the text \\N so that it reads back as text', () => {
    expect(copyField(null)).toBe('\\N');
    expect(copyField('\\N')).toBe('\\\\N');
    expect(copyField('')).toBe('');
  });

  it('escapes backslash, tab, newline and carriage return, every one of them, and nothing else', () => {
    expect(copyField('a\tb\nc\rd\\e')).toBe('a\\tb\\nc\\rd\\\\e');
    expect(copyField('\t\t\n\n\r\r\\\\')).toBe('\\t\\t\\n\\n\\r\\r\\\\\\\\');
    expect(copyField('\\.')).toBe('\\\\.');
    expect(copyField('"quoted", \'single\'; Zoë 日本 🎉 \u0007\u000b\f')).toBe('"quoted", \'single\'; Zoë 日本 🎉 \u0007\u000b\f');
  });

  it('writes integers as they are and refuses any other number', () => {
    expect(copyField(0)).toBe('0');
    expect(copyField(-42)).toBe('-42');
    expect(() => copyField(1.5)).toThrow(RangeError);
    expect(() => copyField(Number.NaN)).toThrow(RangeError);
  });

  it('splits columns by a tab and ends the row with a newline, none of them from a value', () => {
    const line = copyLine(['B1', 2, null, 'x\ty\nz']);
    expect(line).toBe('B1\t2\t\\N\tx\\ty\\nz\n');
    expect(line.split('\t')).toHaveLength(4);
    expect(line.indexOf('\n')).toBe(line.length - 1);
  });
});
