/**
 * A run of CdtTrfTxInf elements (cut by pain001-cut.ts) read for the walk
 * without saxes, which spent most of a worker's parsing time on objects per
 * tag and checks per character. It reads only the plain XML that ERPs write:
 * start, end and empty tags with quoted attributes, and text, in ASCII names.
 * Anything else in the run (an entity or character reference, a CR, a
 * comment, CDATA, a processing instruction or DOCTYPE, a character XML 1.0
 * refuses, `]]>`), and any run that is not well-formed, makes it answer
 * false before or while telling the walk: the caller then reads the run
 * again with saxes from the start, so that what saxes decides, and how it
 * words it, stays saxes's. Pure: text in, walk events out.
 */
import { XML_CHAR } from '../xml-chars.js';

const { GT, SLASH, EQUAL, COLON, DQUOTE, SQUOTE } = XML_CHAR;

/** What the walk is told (Pain001Walk's events, as saxes gives them without its namespace processing). */
export interface TagEvents {
  openTag(name: string, attributes: Record<string, string> | null): void;
  addText(chunk: string): void;
  closeTag(): void;
}

/** A character outside the plain subset: not an XML 1.0 character, `&`, CR; or markup other than tags; or `]]>`. */
const OUTSIDE = /[^\t\n\x20-\x25\x27-\ud7ff\ue000-\ufffd]|<[!?]|\]\]>/;
/** An attribute value saxes would change (tab and newline become spaces) or refuse (`<`). */
const ATTRIBUTE_OUTSIDE = /[\t\n<]/;

/** ASCII name characters: 1 may start a name, 2 only follow. */
const NAME = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z_]/.test(ch)) NAME[c] = 1;
  else if (/[0-9.-]/.test(ch)) NAME[c] = 2;
}

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x09;

/** A hash of the last name nameEnd read, for NAMES. */
let nameHash = 0;

/** The end of the name at `from` (`name` or `prefix:name`, ASCII), or -1 when there is none there. */
function nameEnd(text: string, from: number): number {
  let j = from;
  let colon = false;
  let hash = 0;
  for (;;) {
    let c = text.charCodeAt(j);
    if (NAME[c] !== 1) return -1;
    do {
      hash = (Math.imul(hash, 31) + c) | 0;
      c = text.charCodeAt(++j);
    } while (NAME[c] !== undefined && NAME[c] !== 0);
    nameHash = hash;
    if (c !== COLON || colon) return j;
    colon = true;
    j += 1;
  }
}

/**
 * Names as read before, by their hash: a run repeats a few dozen names for every transfer, and a new string for each
 * tag was most of what the scanner left to collect.
 */
const NAMES: string[] = new Array<string>(1024).fill('');

function nameAt(text: string, from: number, end: number): string {
  const slot = nameHash & 1023;
  const known = NAMES[slot] as string;
  if (known.length === end - from && text.startsWith(known, from)) return known;
  const name = text.slice(from, end);
  NAMES[slot] = name;
  return name;
}

/** The last start tag attributesOf read: its attributes (null for none) and whether it is empty (`/>`). */
let tagAttributes: Record<string, string> | null = null;
let tagEmpty = false;

/**
 * A start tag's attributes from `at` to its end: the index of its `>`, or -1 outside the subset; the attributes and
 * whether it is empty in tagAttributes and tagEmpty (no tuple made for each tag).
 */
function attributesOf(text: string, at: number): number {
  let attributes: Record<string, string> | null = null;
  let j = at;
  for (;;) {
    const spaced = isSpace(text.charCodeAt(j));
    while (isSpace(text.charCodeAt(j))) j += 1;
    const c = text.charCodeAt(j);
    if (c === GT || c === SLASH) {
      if (c === SLASH && text.charCodeAt(j + 1) !== GT) return -1;
      tagAttributes = attributes;
      tagEmpty = c === SLASH;
      return c === SLASH ? j + 1 : j;
    }
    const end = spaced ? nameEnd(text, j) : -1;
    if (end < 0) return -1;
    const name = nameAt(text, j, end);
    j = end;
    while (isSpace(text.charCodeAt(j))) j += 1;
    if (text.charCodeAt(j) !== EQUAL) return -1;
    j += 1;
    while (isSpace(text.charCodeAt(j))) j += 1;
    const quote = text.charCodeAt(j);
    if (quote !== DQUOTE && quote !== SQUOTE) return -1;
    const close = text.indexOf(quote === DQUOTE ? '"' : "'", j + 1);
    if (close < 0) return -1;
    const value = text.slice(j + 1, close);
    if (ATTRIBUTE_OUTSIDE.test(value)) return -1;
    attributes ??= Object.create(null) as Record<string, string>;
    if (name in attributes) return -1;
    attributes[name] = value;
    j = close + 1;
  }
}

/**
 * Tells `events` the elements of `text`, one root element with nothing around it: true when it was all read, false
 * when saxes is to read it instead (the events told so far are void). With `root`, `text` is read as the content of
 * an element of that name, as `<root>${text}</root>` would be, without making that string (pain001-segment.ts wraps
 * a run of transfers in one element: a document has one root).
 */
export function scanTransfers(text: string, events: TagEvents, root?: string): boolean {
  if (OUTSIDE.test(text)) return false;
  const open: string[] = [];
  let at = 0;
  let rooted = false;
  if (root !== undefined) {
    events.openTag(root, null);
    open.push(root);
    rooted = true;
  }
  while (at < text.length) {
    const lt = text.indexOf('<', at);
    if (lt < 0 && root !== undefined && open.length === 1) break; // the rest is the root's text, before its end tag
    // Text outside the root, or at the end: saxes says what is wrong with it.
    if (lt < 0 || (lt > at && open.length === 0)) return false;
    if (lt > at) events.addText(text.slice(at, lt));
    if (text.charCodeAt(lt + 1) === SLASH) {
      const name = open.pop();
      if (name === undefined || !text.startsWith(name, lt + 2)) return false;
      let j = lt + 2 + name.length;
      while (isSpace(text.charCodeAt(j))) j += 1;
      if (text.charCodeAt(j) !== GT) return false;
      events.closeTag();
      at = j + 1;
      continue;
    }
    if (open.length === 0 && rooted) return false;
    const end = nameEnd(text, lt + 1);
    if (end < 0) return false;
    const name = nameAt(text, lt + 1, end);
    rooted = true;
    // Most tags are a bare name.
    if (text.charCodeAt(end) === GT) {
      events.openTag(name, null);
      open.push(name);
      at = end + 1;
      continue;
    }
    const gt = attributesOf(text, end);
    if (gt < 0) return false;
    events.openTag(name, tagAttributes);
    if (tagEmpty) events.closeTag();
    else open.push(name);
    at = gt + 1;
  }
  if (root !== undefined) {
    // The root's end tag, as written after the text.
    if (open.length !== 1) return false;
    if (at < text.length) events.addText(text.slice(at));
    events.closeTag();
    return true;
  }
  return rooted && open.length === 0;
}
