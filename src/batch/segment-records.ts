/**
 * The records of a piece of CSV text, as csv-parse gives them with paybatch's
 * options (trim, relax_quotes, skip_empty_lines, the file's line end), but
 * faster: a line without a quote is split at its delimiters (trimming is the
 * row builder's, with the same characters as csv-parse's), a well-formed
 * record with quoted fields is split here too; anything else (a stray quote,
 * a very long line) is handed to csv-parse itself, so that malformed quoting
 * and its errors are exactly csv-parse's. Each record comes with the line it
 * starts and ends on. A syntax error is thrown as csv-parse throws it, its
 * line counted in the whole file. Pure.
 */
import { parse } from 'csv-parse/sync';
import type { Delimiter } from './delimiter.js';
import type { LineEnd } from './record-boundaries.js';
import { RecordBoundaries, countLineEnds, trimmable } from './record-boundaries.js';
import { fileErrorFrom } from './reader.js';
import { BatchFileError } from './file-error.js';

export interface SegmentRecord {
  record: string[];
  line: number;
  endLine: number;
}

const QUOTE = 0x22;
const isSpace = (code: number): boolean => code === 0x20 || code === 0x09;

/**
 * A record with quoted fields, read as csv-parse reads a well-formed one: a
 * field that starts (after spaces or tabs) with a quote runs to its closing
 * quote, two quotes inside being one, and only spaces or tabs may follow it
 * before the delimiter or the line end. Null for anything else (other blank
 * characters around a quoted field, csv-parse reads byte by byte) (an unclosed quote, a character after
 * a closing quote, a quote inside an unquoted field, a record over `longest`):
 * csv-parse reads that one, and words its error. `bodyEnd`: where the line end
 * that ends the record starts.
 */
function splitQuoted(text: string, from: number, delimiter: string, lineEnd: LineEnd, longest: number): { record: string[]; end: number; bodyEnd: number } | null {
  const record: string[] = [];
  const separator = delimiter.charCodeAt(0);
  const limit = Math.min(text.length, from + longest);
  const endsHere = (at: number): boolean => text.startsWith(lineEnd, at);
  for (let at = from; ; ) {
    let start = at;
    while (start < limit && isSpace(text.charCodeAt(start))) start += 1;
    // Other spaces before a field, of several bytes or line breaks: csv-parse's own reading.
    if (start < limit && !endsHere(start) && text.charCodeAt(start) !== separator && trimmable(text.charCodeAt(start))) return null;
    if (text.charCodeAt(start) === QUOTE) {
      let value = '';
      let next = start + 1;
      for (;;) {
        const close = text.indexOf('"', next);
        if (close === -1 || close >= limit) return null;
        value += text.slice(next, close);
        if (text.charCodeAt(close + 1) === QUOTE) {
          value += '"';
          next = close + 2;
          continue;
        }
        next = close + 1;
        break;
      }
      record.push(value);
      for (;;) {
        if (next >= text.length) return { record, end: text.length, bodyEnd: text.length };
        if (endsHere(next)) return { record, end: next + lineEnd.length, bodyEnd: next };
        const code = text.charCodeAt(next);
        if (code === separator) break;
        if (!isSpace(code) || next >= limit) return null;
        next += 1;
      }
      at = next + 1;
      continue;
    }
    const comma = text.indexOf(delimiter, at);
    const lineStop = text.indexOf(lineEnd, at);
    const stop = comma !== -1 && (lineStop === -1 || comma < lineStop) ? comma : lineStop === -1 ? text.length : lineStop;
    if (stop > limit) return null;
    const field = text.slice(at, stop);
    if (field.includes('"')) return null;
    record.push(field);
    if (stop === comma) {
      at = comma + 1;
      continue;
    }
    return lineStop === -1 ? { record, end: text.length, bodyEnd: text.length } : { record, end: lineStop + lineEnd.length, bodyEnd: lineStop };
  }
}

/**
 * A quote followed by a blank of several bytes (a no-break space, an
 * ideographic space): csv-parse reads what follows unpredictably (it trims by
 * bytes), so such a row is refused rather than read one way here and another on
 * one thread.
 */
const QUOTE_THEN_WIDE_SPACE = /"[ \t]*[\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/;

/** Lines longer than this share of the row limit go to csv-parse, which measures them as it does. */
const LONG_LINE_SHARE = 4;

/**
 * Lines are csv-parse's (see countLineEnds), and a record's line is what one
 * thread gives it (reader.ts): the line after the one the last record ended on,
 * plus the empty lines skipped since, each counted once.
 */
export function* segmentRecords(text: string, startLine: number, options: { delimiter: Delimiter; lineEnd: LineEnd; maxRowCharacters: number }): Generator<SegmentRecord> {
  const { delimiter, lineEnd, maxRowCharacters } = options;
  const boundaries = new RecordBoundaries(delimiter.charCodeAt(0), lineEnd);
  let ended: number[] = [];
  const parseOptions = {
    delimiter, record_delimiter: lineEnd, trim: true, relax_quotes: true, skip_empty_lines: true, max_record_size: maxRowCharacters,
    on_record: (record: string[], context: { lines: number }) => {
      ended.push(context.lines);
      return record;
    },
  } as const;
  /** csv-parse's line at `at`; the line the last record ended on; empty lines since. */
  let csvLine = startLine;
  let lastEnd = startLine - 1;
  let empties = 0;
  let at = 0;
  while (at < text.length) {
    const lineStop = text.indexOf(lineEnd, at);
    const stop = lineStop === -1 ? text.length : lineStop;
    const quote = text.indexOf('"', at);
    if ((quote === -1 || quote >= stop) && stop - at <= maxRowCharacters / LONG_LINE_SHARE) {
      const content = text.slice(at, stop);
      // A carriage return or line feed inside the line is a line more to csv-parse.
      const inside = countLineEnds(content);
      if (content.trim() === '') {
        empties += 1;
      } else {
        yield { record: content.split(delimiter), line: lastEnd + 1 + empties, endLine: csvLine + inside };
        lastEnd = csvLine + inside;
        empties = 0;
      }
      at = lineStop === -1 ? text.length : lineStop + lineEnd.length;
      csvLine += 1 + inside;
      continue;
    }
    // A record with quotes, well formed: split here; anything else (or a long one): csv-parse reads it, to its end.
    const quoted = stop - at <= maxRowCharacters / LONG_LINE_SHARE ? splitQuoted(text, at, delimiter, lineEnd, maxRowCharacters / LONG_LINE_SHARE) : null;
    if (quoted) {
      const endLine = csvLine + countLineEnds(text, at, quoted.bodyEnd);
      yield { record: quoted.record, line: lastEnd + 1 + empties, endLine };
      lastEnd = endLine;
      empties = 0;
      csvLine = endLine + 1;
      at = quoted.end;
      continue;
    }
    const end = boundaries.firstEnd(text, at);
    const piece = text.slice(at, end === -1 ? text.length : end);
    if (QUOTE_THEN_WIDE_SPACE.test(piece)) {
      throw new BatchFileError('invalid_quote', lastEnd + 1 + empties, `line ${lastEnd + 1 + empties}: a quote is followed by a blank character other than a space or a tab (such as a no-break space); remove it or put the field in quotes whole`);
    }
    let records: string[][];
    ended = [];
    try {
      records = parse(piece, parseOptions) as string[][];
    } catch (error) {
      // Where one thread says the failing row starts: after the last record (reader.ts).
      throw fileErrorFrom(error, lastEnd + 1, options, csvLine - 1);
    }
    for (const [index, record] of records.entries()) {
      const endLine = csvLine - 1 + (ended[index] as number);
      yield { record, line: lastEnd + 1 + empties, endLine };
      lastEnd = endLine;
      empties = 0;
    }
    // The piece is one record to its end: the next line is the one after the one it ended on.
    at = end === -1 ? text.length : end;
    if (records.length > 0) csvLine = (ended[records.length - 1] as number) + csvLine;
  }
}
