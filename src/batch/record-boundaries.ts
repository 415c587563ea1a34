/**
 * Where CSV records end, found without parsing them, so that a file can be cut
 * into pieces that parse on their own (each on its own thread). A record ends
 * at the file's line end outside quotes: a line feed, or a carriage return and
 * a line feed when the file's first line ends so (csv-parse takes the first
 * line end it meets for every record; a lone one elsewhere is a character). A quote opens a quoted field only at the start
 * of a field (after spaces, which trimming drops); anywhere else it is a
 * character of the field, as csv-parse reads it with relax_quotes. (Spaces
 * here are every character csv-parse trims.) Inside
 * quotes, two quotes are one quote. Pure; state carries from one chunk of text
 * to the next.
 */
export type LineEnd = '\n' | '\r\n';

/**
 * The lines csv-parse counts inside a record, in text[from, to): every carriage
 * return and every line feed (its line numbers are paybatch's). Only the line
 * end that ends a record counts once when it is two characters; the scanner
 * below counts those.
 */
export function countLineEnds(text: string, from = 0, to = text.length): number {
  let count = 0;
  for (let at = text.indexOf('\n', from); at !== -1 && at < to; at = text.indexOf('\n', at + 1)) count += 1;
  for (let at = text.indexOf('\r', from); at !== -1 && at < to; at = text.indexOf('\r', at + 1)) count += 1;
  return count;
}

/** Whether text[from, to) holds the delimiter or a character csv-parse does not trim (an empty line ends no record). */
function hasContent(text: string, from: number, to: number, delimiter: number): boolean {
  for (let at = from; at < to; at++) {
    const code = text.charCodeAt(at);
    if (code === delimiter || !trimmable(code)) return true;
  }
  return false;
}

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

/** The characters csv-parse trims around a field (the same as JavaScript's trim): a quote after them still opens a quoted field. */
export function trimmable(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  if (code < 0xa0) return false;
  return code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff;
}

/**
 * The CRs of a line from `i` to its LF at `lf` (the line holds one LF, the first at or after i), counted by stepping
 * `cr.at`, the next CR at or after the last one counted (text.length when none), along.
 */
function crsUpTo(text: string, i: number, lf: number, cr: { at: number }): number {
  let crs = 0;
  for (;;) {
    if (cr.at < i) {
      const found = text.indexOf('\r', i);
      cr.at = found === -1 ? text.length : found;
    }
    if (cr.at > lf) return crs;
    crs += 1;
    const found = text.indexOf('\r', cr.at + 1);
    cr.at = found === -1 ? text.length : found;
  }
}

export class RecordBoundaries {
  private inQuotes = false;
  private atFieldStart = true;
  /** A quote inside quotes was the last character seen: the next one tells whether it closed the field or was doubled. */
  private quoteSeen = false;
  /** The last character seen was a carriage return (outside quotes). */
  private crSeen = false;
  /** The record being read has something in it (an empty line ends no record: csv-parse skips it). */
  private content = false;
  /** csv-parse's lines in all the text read so far (see countLineEnds), and up to the last record end found. */
  private lines = 0;
  linesToLastEnd = 0;

  /**
   * @param wholeLines Whether a line without a quote is taken at once, by its
   *   line end (most lines of most files; reading every character of them cost
   *   the thread that cuts a file about as long as a worker parsing it); off,
   *   every character is read (what tests compare it with).
   */
  constructor(
    private readonly delimiter: number,
    private readonly lineEnd: LineEnd = '\n',
    private readonly wholeLines = true,
  ) {}

  /** Reads `text` on from where the last call ended; returns the index just after the last record end in it (not an empty line's), or -1. */
  lastEnd(text: string): number {
    return this.scan(text, false);
  }

  /** Reads `text` from `from` until the first record end; returns the index just after it, or -1. */
  firstEnd(text: string, from = 0): number {
    return this.scan(text, true, from);
  }

  private scan(text: string, first: boolean, from = 0): number {
    let last = -1;
    const delimiter = this.delimiter;
    const crlf = this.lineEnd === '\r\n';
    let { inQuotes, atFieldStart, quoteSeen, crSeen, lines, content } = this;
    const wholeLines = this.wholeLines;
    // The next quote, LF and CR at or after i (text.length when none), looked for again only once passed.
    let quoteAt = -1;
    let lfAt = -1;
    const cr = { at: -1 };
    for (let i = from; i < text.length; i++) {
      if (wholeLines && atFieldStart && !content && !inQuotes && !quoteSeen && !crSeen) {
        // At a line's start (or after blanks only): a line without a quote, up to the file's line end, at once.
        if (quoteAt < i) {
          const quote = text.indexOf('"', i);
          quoteAt = quote === -1 ? text.length : quote;
        }
        if (lfAt < i) {
          const found = text.indexOf('\n', i);
          lfAt = found === -1 ? text.length : found;
        }
        const lf = lfAt;
        if (lf < quoteAt && (!crlf || (lf > i && text.charCodeAt(lf - 1) === CR))) {
          // As read character by character: every CR and LF a line, but the two of a CRLF once.
          lines += 1 + crsUpTo(text, i, lf, cr) - (crlf ? 1 : 0);
          if (hasContent(text, i, crlf ? lf - 1 : lf, delimiter)) {
            last = lf + 1;
            this.linesToLastEnd = lines;
          }
          i = lf;
          if (first && last !== -1) break;
          continue;
        }
      }
      const code = text.charCodeAt(i);
      // csv-parse counts every carriage return and line feed as a line, but the two of a record's end once.
      if (code === CR || (code === LF && !(crlf && crSeen && !inQuotes && !quoteSeen))) lines += 1;
      if (quoteSeen) {
        quoteSeen = false;
        // Two quotes inside a quoted field are one quote; anything else after the quote closed the field.
        if (code === QUOTE) continue;
        inQuotes = false;
      }
      if (inQuotes) {
        if (code === QUOTE) quoteSeen = true;
        continue;
      }
      const afterCr = crSeen;
      crSeen = crlf && code === CR;
      if (code === LF && (!crlf || afterCr)) {
        // Only after a record: a piece that starts after an empty line would count that line as one thread does not.
        if (content) {
          last = i + 1;
          this.linesToLastEnd = lines;
        }
        content = false;
        atFieldStart = true;
        if (first && last !== -1) break;
      } else if (code === delimiter) {
        atFieldStart = true;
        content = true;
      } else if (code === QUOTE && atFieldStart) {
        inQuotes = true;
        atFieldStart = false;
        content = true;
      } else if (!(atFieldStart && trimmable(code))) {
        atFieldStart = false;
        content = true;
      }
    }
    this.inQuotes = inQuotes;
    this.atFieldStart = atFieldStart;
    this.quoteSeen = quoteSeen;
    this.crSeen = crSeen;
    this.lines = lines;
    this.content = content;
    return last;
  }
}
