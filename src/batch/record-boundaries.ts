/**
 * Where CSV records end, found without parsing them, so that a file can be cut
 * into pieces that parse on their own (each on its own thread). A record ends
 * at the file's line end outside quotes: a line feed, or a carriage return and
 * a line feed when the file's first line ends so (csv-parse takes the first
 * line end it meets for every record; a lone one elsewhere is a character). A quote opens a quoted field only at the start
 * of a field (after spaces, which trimming drops); anywhere else it is a
 * character of the field, as csv-parse reads it with relax_quotes. Inside
 * quotes, two quotes are one quote. Pure; state carries from one chunk of text
 * to the next.
 */
export type LineEnd = '\n' | '\r\n';

/** How many records end in `text` by line ends of this kind: the lines csv-parse counts. */
export function countLineEnds(text: string, lineEnd: LineEnd): number {
  let count = 0;
  for (let at = text.indexOf(lineEnd); at !== -1; at = text.indexOf(lineEnd, at + lineEnd.length)) count += 1;
  return count;
}

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;

export class RecordBoundaries {
  private inQuotes = false;
  private atFieldStart = true;
  /** A quote inside quotes was the last character seen: the next one tells whether it closed the field or was doubled. */
  private quoteSeen = false;
  /** The last character seen was a carriage return (outside quotes). */
  private crSeen = false;

  constructor(
    private readonly delimiter: number,
    private readonly lineEnd: LineEnd = '\n',
  ) {}

  /** Reads `text` on from where the last call ended; returns the index just after the last record end in it, or -1. */
  lastEnd(text: string): number {
    return this.scan(text, false);
  }

  /** Reads `text` until the first record end; returns the index just after it, or -1. */
  firstEnd(text: string): number {
    return this.scan(text, true);
  }

  private scan(text: string, first: boolean): number {
    let last = -1;
    const delimiter = this.delimiter;
    const crlf = this.lineEnd === '\r\n';
    let { inQuotes, atFieldStart, quoteSeen, crSeen } = this;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
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
        last = i + 1;
        atFieldStart = true;
        if (first) break;
      } else if (code === delimiter) {
        atFieldStart = true;
      } else if (code === QUOTE && atFieldStart) {
        inQuotes = true;
        atFieldStart = false;
      } else if (!(atFieldStart && (code === SPACE || code === TAB || crSeen))) {
        atFieldStart = false;
      }
    }
    this.inQuotes = inQuotes;
    this.atFieldStart = atFieldStart;
    this.quoteSeen = quoteSeen;
    this.crSeen = crSeen;
    return last;
  }
}
