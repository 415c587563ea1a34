/**
 * Pieces cut where RecordBoundaries says a record ends parse, each on its own,
 * into exactly the records of the whole text: checked on many random texts of
 * delimiters, line ends, quotes in and out of fields, doubled quotes and
 * spaces, fed in random chunks.
 */
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { RecordBoundaries } from '../../src/batch/record-boundaries.js';

const TOKENS = ['a', 'bc', ',', ',', '\n', '\n', '\r\n', '"', '""', ' ', '"x\ny"', '"p,q"', 'x"y', '" q "'];

/** A small seeded generator: the same texts on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 0x100000000;
  };
}

const options = { delimiter: ',', trim: true, relax_quotes: true, skip_empty_lines: true, relax_column_count: true } as const;

function records(text: string, lineEnd?: string): string[][] | null {
  try {
    return parse(text, lineEnd ? { ...options, record_delimiter: lineEnd } : options) as string[][];
  } catch {
    return null;
  }
}

describe('record boundaries', () => {
  it('cuts only where csv-parse ends a record, whatever the chunks', () => {
    const next = random(18);
    let checked = 0;
    for (let n = 0; n < 8000; n++) {
      const text = Array.from({ length: 5 + Math.floor(next() * 40) }, () => TOKENS[Math.floor(next() * TOKENS.length)]).join('');
      const whole = records(text);
      if (whole === null) continue; // a text csv-parse refuses is refused whole or in pieces; the line tests are reader-parallel's
      // As the reader: a first record over several lines is read on one thread; the first line's end is every record's.
      if (new RecordBoundaries(44).firstEnd(text) !== text.indexOf('\n') + 1 || text.slice(0, text.indexOf('\n')).trim() === '') continue;
      const lineEnd = text[text.indexOf('\n') - 1] === '\r' ? '\r\n' : '\n';
      const boundaries = new RecordBoundaries(','.charCodeAt(0), lineEnd);
      const cuts: number[] = [];
      for (let at = 0; at < text.length; ) {
        const size = 1 + Math.floor(next() * 6);
        const end = boundaries.lastEnd(text.slice(at, at + size));
        if (end !== -1) cuts.push(at + end);
        at += size;
      }
      const cut = cuts.length > 0 ? (cuts[Math.floor(next() * cuts.length)] as number) : text.length;
      expect([...(records(text.slice(0, cut), lineEnd) ?? [['refused']]), ...(records(text.slice(cut), lineEnd) ?? [['refused']])], JSON.stringify(text)).toEqual(whole);
      checked += 1;
    }
    expect(checked).toBeGreaterThan(600);
  });

  it('finds the end of the first record (a header) past quoted line ends', () => {
    expect(new RecordBoundaries(44).firstEnd('a,"b\nc",d\ne,f\n')).toBe(10);
    expect(new RecordBoundaries(44).firstEnd('a,b')).toBe(-1);
  });
});
