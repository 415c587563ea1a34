/**
 * The hand-written CSV record against csv-stringify (a one-character delimiter, records ended by \n, a field with a
 * carriage return quoted: quote_record_delimiter), on random and chosen fields.
 */
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { csvLine } from '../../src/reports/csv-line.js';

/** A small deterministic generator (mulberry32): the same fields on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Characters that matter to CSV, and some that must not: letters, digits, spaces, a tab, a formula's start, non-ASCII.
const ALPHABET = ['"', ',', ';', '\n', '\r', ' ', '\t', 'a', 'Z', '0', '9', '=', '-', "'", 'é', '€', '日', '\u0000', '\\', '.'];

describe('csvLine', () => {
  it('writes the bytes csv-stringify writes, for either delimiter, on 20,000 random records', () => {
    const next = random(20261129);
    const field = (): string => Array.from({ length: Math.floor(next() * 6) }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join('');
    for (let n = 0; n < 20_000; n += 1) {
      const fields = Array.from({ length: 1 + Math.floor(next() * 5) }, field);
      for (const delimiter of [',', ';'] as const) {
        expect(csvLine(fields, delimiter), JSON.stringify(fields)).toBe(stringify([fields], { delimiter, record_delimiter: '\n', quote_record_delimiter: true }));
      }
    }
  });

  it('quotes what holds the delimiter, a quote, a line feed or a carriage return; leaves the other delimiter, spaces and empty fields as they are', () => {
    expect(csvLine(['a,b', 'say "hi"', 'x\ny', 'r\r', 'c;d', ' ', ''], ',')).toBe('"a,b","say ""hi""","x\ny","r\r",c;d, ,\n');
    expect(csvLine(['a,b', 'c;d', ''], ';')).toBe('a,b;"c;d";\n');
  });
});
