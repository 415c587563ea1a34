/**
 * The records of a piece of CSV text, as csv-parse gives them with paybatch's
 * options (trim, relax_quotes, skip_empty_lines, the file's line end), but
 * faster: a line without a quote is split at its delimiters (trimming is the
 * row builder's, with the same characters as csv-parse's); a record with a
 * quote, or a very long line, is handed to csv-parse itself, so that quoting
 * and its errors are exactly csv-parse's. Each record comes with the line it
 * starts and ends on. A syntax error is thrown as csv-parse throws it, its
 * line counted in the whole file. Pure.
 */
import { parse } from 'csv-parse/sync';
import type { Delimiter } from './delimiter.js';
import type { LineEnd } from './record-boundaries.js';
import { RecordBoundaries, countLineEnds } from './record-boundaries.js';
import { fileErrorFrom } from './reader.js';

export interface SegmentRecord {
  record: string[];
  line: number;
  endLine: number;
}

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
      const inside = content.indexOf('\r') === -1 && content.indexOf('\n') === -1 ? 0 : countLineEnds(content, lineEnd);
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
    // A record with quotes (it may span lines), or a long one: csv-parse reads it, to its end.
    const end = boundaries.firstEnd(text, at);
    const piece = text.slice(at, end === -1 ? text.length : end);
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
