/**
 * Pieces cut where RecordBoundaries says a record ends parse, each on its own,
 * into exactly the records of the whole text: checked on many random texts of
 * delimiters, line ends, quotes in and out of fields, doubled quotes and
 * spaces, fed in random chunks.
 */
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { RecordBoundaries } from '../../src/batch/record-boundaries.js';
import type { LineEnd } from '../../src/batch/record-boundaries.js';
import { segmentRecords } from '../../src/batch/segment-records.js';
import type { BatchFileError } from '../../src/batch/file-error.js';
import { fileErrorFrom } from '../../src/batch/reader.js';
import { propertyRuns } from '../helpers/depth.js';

const TOKENS = ['a', 'bc', ',', ',', '\n', '\n', '\r\n', '"', '""', ' ', '\t', '\u00a0', '\u3000', '\r', '"x\ny"', '"p,q"', 'x"y', '" q "'];

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

/** A text csv-parse refuses whole is refused by the fast reader too. */
function refusedAlike(text: string): void {
  const firstLf = text.indexOf('\n');
  if (firstLf === -1 || new RecordBoundaries(44).firstEnd(text) !== firstLf + 1 || text.slice(0, firstLf).trim() === '' || text.slice(0, firstLf - 1).includes('\r')) return;
  const lineEnd = text[firstLf - 1] === '\r' ? '\r\n' : '\n';
  let lastEnd = 0;
  let wholeError: unknown = null;
  try {
    parse(text, { ...options, on_record: (record: string[], context: { lines: number }) => {
      lastEnd = context.lines;
      return record;
    } });
  } catch (error) {
    wholeError = fileErrorFrom(error, lastEnd + 1, { maxRowCharacters: 100_000 });
  }
  let fastError: unknown = null;
  try {
    for (const _record of segmentRecords(text, 1, { delimiter: ',', lineEnd, maxRowCharacters: 100_000 })) void _record;
  } catch (error) {
    fastError = error;
  }
  // Refused too; the words may differ (csv-parse words an error by what it read before), and a file refused on
  // threads is read again on one to say it as one thread does (validate-file.ts).
  expect(fastError, JSON.stringify(text)).not.toBeNull();
  expect((wholeError as BatchFileError).code).toBeDefined();
  refusals += 1;
}

let refusals = 0;

describe('record boundaries', () => {
  it('cuts only where csv-parse ends a record, whatever the chunks', () => {
    const next = random(18);
    let checked = 0;
    const texts = propertyRuns(12_000);
    for (let n = 0; n < texts; n++) {
      const text = Array.from({ length: 5 + Math.floor(next() * 40) }, () => TOKENS[Math.floor(next() * TOKENS.length)]).join('');
      // A quote then a blank of several bytes: csv-parse reads on unpredictably; refused on threads (segment-records.ts).
      if (/"[ \t]*[\u00a0\u3000]/.test(text)) continue;
      const whole = records(text);
      if (whole === null) {
        refusedAlike(text);
        continue;
      }
      // As the reader: a first record over several lines is read on one thread; the first line's end is every record's.
      if (new RecordBoundaries(44).firstEnd(text) !== text.indexOf('\n') + 1 || text.slice(0, text.indexOf('\n')).trim() === '' || text.slice(0, text.indexOf('\n') - 1).includes('\r')) continue;
      const lineEnd = text[text.indexOf('\n') - 1] === '\r' ? '\r\n' : '\n';
      const boundaries = new RecordBoundaries(','.charCodeAt(0), lineEnd);
      const cuts: number[] = [];
      const linesAt = new Map<number, number>([[text.length, 0]]);
      for (let at = 0; at < text.length; ) {
        const size = 1 + Math.floor(next() * 6);
        const end = boundaries.lastEnd(text.slice(at, at + size));
        if (end !== -1) {
          cuts.push(at + end);
          linesAt.set(at + end, boundaries.linesToLastEnd);
        }
        at += size;
      }
      const cut = cuts.length > 0 ? (cuts[Math.floor(next() * cuts.length)] as number) : text.length;
      expect([...(records(text.slice(0, cut), lineEnd) ?? [['refused']]), ...(records(text.slice(cut), lineEnd) ?? [['refused']])], JSON.stringify(text)).toEqual(whole);
      // The fast reader of pieces gives the same records, starting on the lines one thread gives them (see reader.ts).
      const withInfo = parse(text, { ...options, info: true }) as unknown as { record: string[]; info: { lines: number; empty_lines: number } }[];
      let lastEnd = 0;
      let lastEmpty = 0;
      const expected = withInfo.map(({ record, info }) => {
        const line = lastEnd + 1 + (info.empty_lines - lastEmpty);
        lastEnd = info.lines;
        lastEmpty = info.empty_lines;
        return { record: record.map((cell) => cell.trim()), line };
      });
      // In two pieces, the second starting on the line the scanner counted to the cut.
      const pieceOptions = { delimiter: ',', lineEnd: lineEnd as LineEnd, maxRowCharacters: 100_000 } as const;
      const fast = [...segmentRecords(text.slice(0, cut), 1, pieceOptions), ...segmentRecords(text.slice(cut), 1 + (linesAt.get(cut) as number), pieceOptions)];
      expect(fast.map(({ record, line }) => ({ record: record.map((cell) => cell.trim()), line })), JSON.stringify(text)).toEqual(expected);
      checked += 1;
    }
    // The generator reaches both kinds of text (about 5 % compared whole, 13 % refused, at any count).
    expect(checked).toBeGreaterThan(texts / 20);
    expect(refusals).toBeGreaterThan(texts / 240);
  });

  it('finds the same ends taking lines without quotes at once as reading every character', () => {
    // Mostly without quotes, so that most lines are taken at once, with some quotes between: both ways alternate.
    const PLAIN = ['a', 'bc', ',', ',', ',', '\n', '\n', '\r\n', '\r\n', '\r', ' ', '\t', '\u00a0', '\u3000', 'x y', '\n\n', ' \r\n'];
    const QUOTED = ['"', '""', '"x\ny"', '"p,q"'];
    const next = random(7);
    for (let n = 0; n < propertyRuns(6_000); n++) {
      const text = Array.from({ length: 10 + Math.floor(next() * 200) }, () =>
        next() < 0.03 ? QUOTED[Math.floor(next() * QUOTED.length)] : PLAIN[Math.floor(next() * PLAIN.length)]).join('');
      for (const lineEnd of ['\n', '\r\n'] as const) {
        for (const delimiter of [',', '\t']) {
          const fast = new RecordBoundaries(delimiter.charCodeAt(0), lineEnd);
          const slow = new RecordBoundaries(delimiter.charCodeAt(0), lineEnd, false);
          for (let at = 0; at < text.length; ) {
            const size = 1 + Math.floor(next() * 80);
            const chunk = text.slice(at, at + size);
            const where = JSON.stringify({ text, at, size, lineEnd, delimiter });
            expect(fast.lastEnd(chunk), where).toBe(slow.lastEnd(chunk));
            expect(fast.linesToLastEnd, where).toBe(slow.linesToLastEnd);
            at += size;
          }
          // What is left open at the end (a quote, a line's content) is the same too: the same end for one more line.
          expect(fast.lastEnd('z\r\n'), text).toBe(slow.lastEnd('z\r\n'));
          expect(fast.linesToLastEnd, text).toBe(slow.linesToLastEnd);
        }
      }
    }
  });

  it('finds the end of the first record (a header) past quoted line ends', () => {
    expect(new RecordBoundaries(44).firstEnd('a,"b\nc",d\ne,f\n')).toBe(10);
    expect(new RecordBoundaries(44).firstEnd('a,b')).toBe(-1);
  });

  it('refuses a quote followed by a blank of several bytes on threads, naming the line', () => {
    const read = (): unknown[] => [...segmentRecords('a,b\nc,"d"\u00a0,e\n', 7, { delimiter: ',', lineEnd: '\n', maxRowCharacters: 100_000 })];
    expect(read).toThrow(/^line 8: a quote is followed by a blank character other than a space or a tab/);
  });
});
