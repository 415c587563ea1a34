/**
 * Bounds on what an XML parser holds at once, checked on a workbook part's
 * bytes as they are inflated, before exceljs's parser (saxes) sees them.
 * saxes keeps a whole text, tag, comment or CDATA section as one string
 * until it ends, and an open element per level of nesting; exceljs keeps a
 * whole shared string (all its runs of rich text) and a whole row. A part
 * that packs well can make any of them gigabytes (a shared string of a
 * billion spaces, a sheet padded between its tags), hence "Invalid string
 * length" or gigabytes of memory. Each is bounded far above what Excel
 * writes (a cell holds at most 32,767 characters). Pure: bytes in, a problem
 * out. Not an XML parser: it follows just enough of XML to know where each
 * text, tag and element starts and ends.
 */
import { XML_CHAR } from './xml-chars.js';

const { LT, GT, SLASH, BANG, QUESTION, DASH, BRACKET, DQUOTE, SQUOTE } = XML_CHAR;

/** A text, a tag (with its attributes), a comment, a CDATA section or a processing instruction. */
export const MAX_MARKUP_BYTES = 1024 * 1024;
/** A shared string (`<si>`, its runs included) or a sheet row (`<row>`, its cells included). */
export const MAX_RECORD_BYTES = 4 * 1024 * 1024;
/** A sheet nests about seven deep. */
export const MAX_DEPTH = 64;

export interface MarkupProblem {
  code: 'markup_too_large' | 'not_a_workbook';
  message: string;
}

/** Where the scan is: in a text, just past a `<`, in a tag (or a quoted attribute value in it), past `<!`, in a comment, a CDATA section or an instruction. */
const State = { Text: 0, Open: 1, Tag: 2, Quote: 3, Bang: 4, Comment: 5, Cdata: 6, Instruction: 7 } as const;
type State = (typeof State)[keyof typeof State];

const CDATA_OPEN = '[CDATA[';

/** A part's bytes followed chunk by chunk; the record is the element at `recordDepth` (a shared string at 2, a row at 3). */
export class MarkupBounds {
  private state: State = State.Text;
  private position = 0;
  private runStart = 0;
  private depth = 0;
  private recordStart = -1;
  private closing = false;
  private previous = 0;
  private quote = 0;
  private repeats = 0;
  private bang = '';

  constructor(private readonly record: { depth: number; name: string } | null) {}

  /** The next bytes of the part: the first bound they break, or null. */
  scan(chunk: Buffer): MarkupProblem | null {
    const base = this.position;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i] as number;
      switch (this.state) {
        case State.Text: {
          const next = chunk.indexOf(LT, i);
          if (next < 0) {
            i = chunk.length;
            break;
          }
          const problem = this.checkRun(base + next);
          if (problem) return problem;
          this.runStart = base + next;
          this.state = State.Open;
          i = next;
          break;
        }
        case State.Open:
          this.closing = byte === SLASH;
          this.state = byte === BANG ? State.Bang : byte === QUESTION ? State.Instruction : State.Tag;
          this.bang = '';
          this.previous = byte;
          break;
        case State.Tag: {
          // The tag's name and attributes, up to a quote or its end, in one tight pass.
          let j = i;
          let at = chunk[j] as number;
          while (at !== GT && at !== DQUOTE && at !== SQUOTE && ++j < chunk.length) at = chunk[j] as number;
          if (j > i) this.previous = chunk[j - 1] as number;
          i = j;
          if (j === chunk.length) break;
          if (at === GT) {
            const problem = this.endTag(base + j);
            if (problem) return problem;
          } else {
            this.quote = at;
            this.state = State.Quote;
          }
          this.previous = at;
          break;
        }
        case State.Quote: {
          const end = chunk.indexOf(this.quote, i);
          i = end < 0 ? chunk.length : end;
          if (end >= 0) {
            this.state = State.Tag;
            this.previous = this.quote;
          }
          break;
        }
        case State.Bang: {
          const problem = this.readBang(byte);
          if (problem) return problem;
          break;
        }
        case State.Comment:
        case State.Cdata: {
          const closer = this.state === State.Comment ? DASH : BRACKET;
          if (byte === GT && this.repeats >= 2) {
            const problem = this.endMarkup(base + i);
            if (problem) return problem;
          } else {
            this.repeats = byte === closer ? this.repeats + 1 : 0;
          }
          break;
        }
        case State.Instruction:
          if (byte === GT && this.previous === QUESTION) {
            const problem = this.endMarkup(base + i);
            if (problem) return problem;
          }
          this.previous = byte;
          break;
      }
    }
    this.position = base + chunk.length;
    return this.checkRun(this.position) ?? this.checkRecord(this.position);
  }

  /** The next byte after `<!`, a few per comment or CDATA section (cold): which one it opens, or markup no workbook part has. */
  private readBang(byte: number): MarkupProblem | null {
    this.bang += String.fromCharCode(byte);
    if (this.bang === '--') {
      this.state = State.Comment;
      this.repeats = 0;
    } else if (this.bang === CDATA_OPEN) {
      this.state = State.Cdata;
      this.repeats = 0;
    } else if (!'--'.startsWith(this.bang) && !CDATA_OPEN.startsWith(this.bang)) {
      return { code: 'not_a_workbook', message: `holds a document type declaration or other <! markup, which no workbook part has (at byte ${this.runStart})` };
    }
    return null;
  }

  /** A comment, CDATA section or instruction ends at `at` (its `>`): text follows. */
  private endMarkup(at: number): MarkupProblem | null {
    const problem = this.checkRun(at + 1);
    this.state = State.Text;
    this.runStart = at + 1;
    return problem;
  }

  /** A start, end or empty tag ends at `at`: the element depth moves, and a record may start or end. */
  private endTag(at: number): MarkupProblem | null {
    const problem = this.checkRun(at + 1);
    if (problem) return problem;
    const tagStart = this.runStart;
    this.state = State.Text;
    this.runStart = at + 1;
    if (this.closing) {
      if (this.record && this.depth === this.record.depth) {
        const record = this.checkRecord(at + 1);
        if (record) return record;
        this.recordStart = -1;
      }
      this.depth = Math.max(0, this.depth - 1);
      return null;
    }
    if (this.previous === SLASH) return null; // an empty element: <c r="A1"/>
    this.depth += 1;
    if (this.depth > MAX_DEPTH) return { code: 'markup_too_large', message: `nests elements more than ${MAX_DEPTH} deep (at byte ${tagStart})` };
    if (this.record && this.depth === this.record.depth) this.recordStart = tagStart;
    return null;
  }

  private checkRun(at: number): MarkupProblem | null {
    if (at - this.runStart <= MAX_MARKUP_BYTES) return null;
    const what = this.state === State.Text ? 'a text' : 'a tag, comment or CDATA section';
    return { code: 'markup_too_large', message: `holds ${what} of more than ${MAX_MARKUP_BYTES} bytes (from byte ${this.runStart})` };
  }

  private checkRecord(at: number): MarkupProblem | null {
    if (!this.record || this.recordStart < 0 || at - this.recordStart <= MAX_RECORD_BYTES) return null;
    return { code: 'markup_too_large', message: `holds a ${this.record.name} of more than ${MAX_RECORD_BYTES} bytes (from byte ${this.recordStart})` };
  }
}
