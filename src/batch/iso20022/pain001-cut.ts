/**
 * Cuts a pain.001's text into its CdtTrfTxInf elements and the rest, without
 * parsing it: the transfers are parsed on worker threads
 * (pain001-segment.ts), the rest (the group header, each PmtInf's own
 * elements, the document's structure) by this thread's parser, which is what
 * says whether the file is whole and what its control totals are. Every
 * character goes to exactly one of them, in order, so between them the file
 * is parsed whole: a transfer is cut where its start tag opens at the depth of
 * a PmtInf's children and ends where that depth is back, as found by
 * following just enough of XML (tags and their quoted attribute values,
 * comments, CDATA sections, processing instructions); a file this cannot
 * follow, such as one with a DOCTYPE, is refused by one parser or the other.
 * Pure: text in, pieces out.
 */
import { BatchFileError } from '../file-error.js';
import { XML_CHAR } from '../xml-chars.js';

const { LT, GT, SLASH, BANG, QUESTION, DQUOTE, SQUOTE } = XML_CHAR;

/** Told each piece in file order: a transfer (a whole CdtTrfTxInf element) or the text between transfers. */
export type PieceSink = (piece: string, transfer: boolean) => void;

/** The end (just past its `>`) of the markup that opens at `lt`, or -1 when the text does not hold all of it yet. */
function markupEnd(text: string, lt: number): number {
  const next = text.charCodeAt(lt + 1);
  if (next !== next) return -1; // NaN: the text ends at the `<`
  if (next === BANG) {
    if (text.length < lt + 9) return -1; // not yet known whether a comment or a CDATA section opens
    if (text.startsWith('<!--', lt)) return after(text.indexOf('-->', lt + 4), 3);
    if (text.startsWith('<![CDATA[', lt)) return after(text.indexOf(']]>', lt + 9), 3);
    return after(text.indexOf('>', lt), 1); // a DOCTYPE or the like: refused by whichever parser it goes to
  }
  if (next === QUESTION) return after(text.indexOf('?>', lt + 2), 2);
  for (let j = lt + 1; j < text.length; j++) {
    const at = text.charCodeAt(j);
    if (at === GT) return j + 1;
    if (at === DQUOTE || at === SQUOTE) {
      const close = text.indexOf(at === DQUOTE ? '"' : "'", j + 1);
      if (close < 0) return -1;
      j = close;
    }
  }
  return -1;
}

const after = (found: number, length: number): number => (found < 0 ? -1 : found + length);

/** The length of the name at `from` in the markup ending at `end`. */
function nameLength(text: string, from: number, end: number): number {
  let j = from;
  while (j < end) {
    const at = text.charCodeAt(j);
    if (at === GT || at === SLASH || at <= 0x20) break;
    j += 1;
  }
  return j - from;
}

/** The local name of the start tag at `lt` (its prefix left out). */
function localName(text: string, lt: number, end: number): string {
  const name = text.slice(lt + 1, lt + 1 + nameLength(text, lt + 1, end));
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
}

export class TransferCutter {
  /** Text not yet cut: a markup not yet ended, at its start. */
  private buffer = '';
  private depth = 0;
  /** The element at depth 3 is a PmtInf. */
  private inPayment = false;
  /** The transfer being cut, from earlier text; `cutting` while there is one. */
  private transfer = '';
  private cutting = false;
  private bangAt = 0;
  private questionAt = 0;
  /** The name of the last transfer's start tag, as written (kept, not sliced again for each transfer). */
  private name = '';

  /** `maxTransferChars`: a transfer, or a piece of markup, longer than this is refused (it is held whole). */
  constructor(private readonly maxTransferChars: number) {}

  /** The next text of the file: `sink` is told every piece it completes. */
  push(text: string, sink: PieceSink): void {
    const all = this.buffer === '' ? text : this.buffer + text;
    // Where the next <! and <? are in `all`, looked for again only once passed (-1: none).
    this.bangAt = 0;
    this.questionAt = 0;
    let from = 0; // the start of what is not yet told (outside a transfer) or kept (in one)
    let at = 0;
    for (;;) {
      const lt = all.indexOf('<', at);
      if (lt < 0) break;
      const end = markupEnd(all, lt);
      if (end < 0) {
        at = lt;
        break;
      }
      const next = all.charCodeAt(lt + 1);
      if (next === SLASH) {
        this.depth -= 1;
        if (this.cutting && this.depth === 3) {
          sink(this.transfer + all.slice(from, end), true);
          this.transfer = '';
          this.cutting = false;
          from = end;
        }
      } else if (next !== BANG && next !== QUESTION) {
        const empty = all.charCodeAt(end - 2) === SLASH;
        if (!this.cutting && this.depth === 3 && this.inPayment && localName(all, lt, end) === 'CdtTrfTxInf') {
          if (lt > from) sink(all.slice(from, lt), false);
          from = lt;
          const whole = empty ? -1 : this.plainEnd(all, lt, end);
          if (whole > 0) {
            // The transfer whole, at once: the depth is back where it was.
            sink(all.slice(lt, whole), true);
            from = at = whole;
            continue;
          }
          this.cutting = true;
          if (empty) {
            sink(all.slice(lt, end), true);
            this.cutting = false;
            from = end;
          }
        }
        if (!empty) {
          this.depth += 1;
          if (this.depth === 3) this.inPayment = localName(all, lt, end) === 'PmtInf';
        }
      }
      at = end;
    }
    if (at < all.length && all.indexOf('<', at) < 0) at = all.length;
    // What is complete is told (outside) or kept (a transfer's start); a markup not yet ended waits for more text.
    if (this.cutting) {
      this.transfer += all.slice(from, at);
      if (this.transfer.length > this.maxTransferChars) this.tooLong('a CdtTrfTxInf');
    } else if (at > from) sink(all.slice(from, at), false);
    this.buffer = all.slice(at);
    if (this.buffer.length > this.maxTransferChars) this.tooLong('a tag, comment or CDATA section');
  }

  /**
   * The end of the transfer whose start tag is `all[lt, end)`, found at once when it is plain (most are): its end tag
   * in this text, and between the two no comment, CDATA section, instruction or other <! markup (which may hold
   * anything), nor a tag starting with its name (a nested one). In well-formed XML, the first end tag of its name is
   * then its own. -1 otherwise: it is followed tag by tag. A file that is not well-formed may be cut otherwise than
   * tag by tag would; a parser refuses it either way.
   */
  private plainEnd(all: string, lt: number, end: number): number {
    const length = nameLength(all, lt + 1, end);
    if (length !== this.name.length || !all.startsWith(this.name, lt + 1)) this.name = all.slice(lt + 1, lt + 1 + length);
    const name = this.name;
    // The first `</name>` and the first `<name` after the start tag, in one pass over the occurrences of the name.
    let close = -1;
    for (let at = all.indexOf(name, end); at >= 0; at = all.indexOf(name, at + 1)) {
      if (all.charCodeAt(at - 1) !== LT) {
        if (all.charCodeAt(at - 1) === SLASH && all.charCodeAt(at - 2) === LT && all.charCodeAt(at + length) === GT) {
          close = at - 2;
          break;
        }
      } else if (at - 1 >= end) {
        return -1; // a nested one
      }
    }
    if (close < 0 || close + length + 3 - lt > this.maxTransferChars) return -1;
    if (this.bangAt < end && this.bangAt >= 0) this.bangAt = all.indexOf('<!', end);
    if (this.questionAt < end && this.questionAt >= 0) this.questionAt = all.indexOf('<?', end);
    if ((this.bangAt >= 0 && this.bangAt < close) || (this.questionAt >= 0 && this.questionAt < close)) return -1;
    return close + length + 3;
  }

  /** The file has ended: what is left is told as the text outside (its parser finds it unfinished). */
  end(sink: PieceSink): void {
    if (this.cutting) throw new BatchFileError('xml_not_whole', null, 'the file ends inside a CdtTrfTxInf: it is not whole');
    if (this.buffer !== '') sink(this.buffer, false);
    this.buffer = '';
  }

  private tooLong(what: string): never {
    throw new BatchFileError('xml_refused', null, `the file holds ${what} of more than ${this.maxTransferChars} characters: refused`);
  }
}
