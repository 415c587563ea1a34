/**
 * The pain.001 reader's state as saxes walks a file (or, on a worker thread,
 * a run of its CdtTrfTxInf elements: see pain001-segment.ts): the open
 * elements, the block being collected (group header, payment, transfer), the
 * control tallies and the rows ready to be yielded. saxes runs without its
 * namespace processing (which took most of its time): the root's namespace is
 * read from its declaration, and a prefix must be declared where it is used,
 * as saxes would hold it.
 */
import { SaxesParser } from 'saxes';
import type { SaxesTag } from 'saxes';
import type { Field } from '../../validate/fields.js';
import type { ColumnPlan } from '../columns.js';
import { BatchFileError } from '../file-error.js';
import type { BatchRow, ReaderOptions } from '../opened-batch.js';
import { formatDecimal, parseDecimal } from './decimal.js';
import type { MappingOptions } from './pain001-fields.js';
import { SOURCES, mapTransaction } from './pain001-fields.js';

export const PAIN001_NAMESPACES: Readonly<Record<string, '03' | '09'>> = {
  'urn:iso:std:iso:20022:tech:xsd:pain.001.001.03': '03',
  'urn:iso:std:iso:20022:tech:xsd:pain.001.001.09': '09',
};

/** What the file says of itself, once read: pain.002 answers it by these. */
export interface Pain001Header {
  version: '03' | '09';
  messageId: string;
  /** GrpHdr's NbOfTxs and CtrlSum as written. */
  count: string;
  sum: string;
}

/** A transfer as the file gives it, for a status report that answers it transfer by transfer. */
export interface TransferRef {
  line: number;
  paymentId: string;
  endToEndId: string;
  amount: string;
  currency: string;
}

/** A block's elements as the reader collects them: its text by path, kept short (a row's limit). */
class Block {
  readonly elements: Map<string, string>;
  constructor(readonly depth: number, elements?: Iterable<[string, string]>) {
    this.elements = new Map(elements);
  }
}

/** The running count and sum that a NbOfTxs and CtrlSum are checked against. */
export interface Tally {
  count: number;
  sum: bigint;
  declaredCount?: string;
  declaredSum?: string;
}

export function checkTally(tally: Tally, where: string): void {
  if (tally.declaredCount !== undefined && tally.declaredCount !== String(tally.count)) {
    throw new BatchFileError('control_totals', null, `${where}/NbOfTxs says ${tally.declaredCount} transfers, the file holds ${tally.count}: nothing of it is sent`);
  }
  if (tally.declaredSum !== undefined) {
    const declared = parseDecimal(tally.declaredSum);
    if (declared === null) throw new BatchFileError('control_totals', null, `${where}/CtrlSum "${tally.declaredSum}" is not a decimal number`);
    if (declared !== tally.sum) throw new BatchFileError('control_totals', null, `${where}/CtrlSum says ${tally.declaredSum}, the transfers' amounts add up to ${formatDecimal(tally.sum)}: nothing of it is sent`);
  }
}

export function refuse(message: string): never {
  throw new BatchFileError('xml_refused', null, message);
}

/** Where a transfer is, for messages, kept for the most recent rows (a late finding about an old row names it without its E2E). */
const PLACES_KEPT = 4096;
/**
 * A worker's run asks only for the place of the transfer just ended (its row's issues): a few are kept, not a ring of
 * PLACES_KEPT made for every run (48 KB each, most of what a run's walk allocated).
 */
const RUN_PLACES_KEPT = 16;

/** Element paths kept for reuse below one parent (and parents, this squared). */
const CHILD_PATHS_KEPT = 64;

/** Told each transfer as read (the pain.002 writer reads the file again through it). */
export type Seen = (transfer: TransferRef) => void;

/** A worker's run of transfers: the payment they are in, as the whole file's walk had it before them. */
export interface Resume {
  version: '03' | '09';
  /** The PmtInf's elements before its first transfer. */
  payment: [string, string][];
  paymentIndex: number;
  /** The line of the payment's first transfer, and how many transfers the file has before this run. */
  paymentFirstLine: number;
  transfersBefore: number;
  /** The namespace prefixes declared around them. */
  prefixes: string[];
}

export interface WalkHooks {
  seen?: Seen;
  /** Told each row as its transfer ends, instead of its being kept in `ready` (a worker checks it at once: its garbage dies young). */
  row?(row: BatchRow): void;
  /** Instead of checking a PmtInf's tally at its end (its transfers are counted elsewhere): told its declared figures. */
  paymentEnded?(index: number, declaredCount: string | undefined, declaredSum: string | undefined): void;
}

const local = (name: string): string => {
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
};

export class Pain001Walk {
  readonly ready: BatchRow[] = [];
  readonly group: Tally = { count: 0, sum: 0n };
  version: '03' | '09' | null = null;
  messageId = '';
  ended = false;
  /** The local names of the open elements, and each one's path below the block it is in. */
  private readonly stack: string[] = [];
  private readonly paths: string[] = [];
  /** The namespace prefixes declared by each open element (most declare none). */
  private readonly declared: (string[] | undefined)[] = [];
  private readonly prefixes = new Map<string, number>([['xml', 1]]);
  private payment: Tally | null = null;
  private paymentIndex = 0;
  private transferIndex = 0;
  private groupHeader: Block | null = null;
  private paymentBlock: Block | null = null;
  private transfer: Block | null = null;
  private text = '';
  private readonly firstLineOfPayment: { line: number; index: number }[] = [];
  /** The EndToEndIds of the last `placesKept` lines, each at its line modulo `placesKept` (lines come one after another). */
  private readonly placesKept: number;
  private readonly endToEndLines: Int32Array;
  private readonly endToEnd: (string | undefined)[];
  /** A worker's run: its wrapper element, not yet opened. */
  private wrapper = false;
  private readonly resumed: boolean;
  private readonly childPaths = new Map<string, Map<string, string>>();

  constructor(
    private readonly options: Pick<ReaderOptions, 'maxRowCharacters'>,
    private readonly mapping: MappingOptions,
    private readonly hooks: WalkHooks = {},
    resume?: Resume,
  ) {
    this.resumed = resume !== undefined;
    this.placesKept = resume ? RUN_PLACES_KEPT : PLACES_KEPT;
    this.endToEndLines = new Int32Array(this.placesKept);
    this.endToEnd = new Array<string | undefined>(this.placesKept);
    if (!resume) return;
    this.version = resume.version;
    this.stack.push('Document', 'CstmrCdtTrfInitn', 'PmtInf');
    this.paths.push('', '', '');
    this.declared.push(undefined, undefined, undefined);
    this.paymentIndex = resume.paymentIndex;
    this.paymentBlock = new Block(3, resume.payment);
    this.payment = { count: 0, sum: 0n };
    this.transferIndex = resume.transfersBefore;
    this.firstLineOfPayment.push({ line: resume.paymentFirstLine, index: resume.paymentIndex });
    this.wrapper = true;
    for (const prefix of resume.prefixes) this.prefixes.set(prefix, 1);
  }

  /** The payment's elements so far (a worker maps its transfers with them). */
  paymentElements(): [string, string][] {
    return [...(this.paymentBlock?.elements ?? [])];
  }

  /** The namespace prefixes in scope (a worker's run of transfers is read with them). */
  prefixesInScope(): string[] {
    return [...this.prefixes].filter(([prefix, open]) => open > 0 && prefix !== 'xml').map(([prefix]) => prefix);
  }

  get paymentNumber(): number {
    return this.paymentIndex;
  }

  /** A transfer read elsewhere (a worker thread): counted for the lines and places of the next ones. */
  countTransfer(): number {
    this.transferIndex += 1;
    return this.transferIndex + 1;
  }

  endToEndOf(line: number): string | undefined {
    const at = line % this.placesKept;
    return this.endToEndLines[at] === line ? this.endToEnd[at] : undefined;
  }

  /** The line of the current payment's first transfer. */
  paymentFirstLine(): number {
    return this.firstLineOfPayment.at(-1)?.line ?? this.transferIndex + 2;
  }

  /** A transfer's EndToEndId, read elsewhere, for the places of late findings. */
  noteEndToEnd(line: number, id: string): void {
    const at = line % this.placesKept;
    this.endToEndLines[at] = line;
    this.endToEnd[at] = id;
  }

  /** `qualified`: the name as written (`p:Amt`); `attributes` by their names as written, null for none (most tags). */
  openTag(qualified: string, attributes: Record<string, string> | null): void {
    if (this.wrapper) {
      this.wrapper = false;
      return;
    }
    const name = local(qualified);
    this.declare(attributes);
    if (name.length !== qualified.length) this.bound(qualified);
    if (this.stack.length === 0) this.root(qualified, name, attributes ?? {});
    // A worker's run holds transfers only, one after another (pain001-cut.ts cut them so): anything else is not the file's.
    if (this.resumed && this.stack.length === 3 && name !== 'CdtTrfTxInf') throw new BatchFileError('xml_syntax', null, `not well-formed XML: <${qualified}> where a CdtTrfTxInf was cut`);
    this.stack.push(name);
    this.text = '';
    const depth = this.stack.length;
    if (depth === 3 && name === 'GrpHdr') this.groupHeader = new Block(depth);
    else if (depth === 3 && name === 'PmtInf') {
      this.paymentIndex += 1;
      this.paymentBlock = new Block(depth);
      this.payment = { count: 0, sum: 0n };
      this.firstLineOfPayment.push({ line: this.transferIndex + 2, index: this.paymentIndex });
    } else if (depth === 4 && name === 'CdtTrfTxInf' && this.paymentBlock) this.transfer = new Block(depth);
    const block = this.transfer ?? this.paymentBlock ?? this.groupHeader;
    const parent = depth >= 2 ? (this.paths[depth - 2] as string) : '';
    const path = !block || block.depth === depth ? '' : parent === '' ? name : this.childPath(parent, name);
    this.paths.push(path);
    if (block && attributes) for (const attribute in attributes) this.keep(block, `${path}@${attribute}`, attributes[attribute] as string);
  }

  /** Text or CDATA (CDATA is text too: the same bound as plain text). */
  addText(chunk: string): void {
    if (this.text.length + chunk.length > this.options.maxRowCharacters) refuse(`the element ${this.stack.join('/')} holds more than ${this.options.maxRowCharacters} characters (batch.max_row_characters)`);
    this.text += chunk;
  }

  closeTag(): void {
    const depth = this.stack.length;
    // A worker's run ends with its wrapper, inside the payment.
    if (this.resumed && depth === 3) {
      this.ended = true;
      return;
    }
    const block = this.transfer ?? this.paymentBlock ?? this.groupHeader;
    if (block && depth > block.depth && this.text !== '') {
      const text = this.text.trim();
      if (text !== '') this.keep(block, this.paths[depth - 1] as string, text);
    }
    this.text = '';
    if (this.transfer && depth === this.transfer.depth) this.endTransfer(this.transfer);
    else if (this.paymentBlock && depth === this.paymentBlock.depth && this.payment) this.endPayment(this.paymentBlock, this.payment);
    else if (this.groupHeader && depth === this.groupHeader.depth) this.endGroupHeader(this.groupHeader);
    else if (depth === 1) this.ended = true;
    this.stack.pop();
    this.paths.pop();
    const declared = this.declared.pop();
    if (declared) for (const prefix of declared) this.prefixes.set(prefix, (this.prefixes.get(prefix) as number) - 1);
  }

  /** Where a transfer is, for messages: `PmtInf[2]/CdtTrfTxInf[17] (E2E INV-2291)`. */
  where(line: number): string {
    let payment = this.firstLineOfPayment[0]?.index ?? 1;
    let first = 2;
    for (const block of this.firstLineOfPayment) {
      if (block.line > line) break;
      payment = block.index;
      first = block.line;
    }
    const id = this.endToEndOf(line);
    return `PmtInf[${payment}]/CdtTrfTxInf[${line - first + 1}]${id === undefined ? '' : ` (E2E ${id})`}`;
  }

  header(): Pain001Header {
    const group = this.group;
    return { version: this.version ?? '03', messageId: this.messageId, count: group.declaredCount ?? String(group.count), sum: group.declaredSum ?? formatDecimal(group.sum) };
  }

  /** `parent/name`, built once per distinct path (a file repeats a few dozen paths for every transfer). */
  private childPath(parent: string, name: string): string {
    let children = this.childPaths.get(parent);
    if (children === undefined) {
      if (this.childPaths.size >= CHILD_PATHS_KEPT * CHILD_PATHS_KEPT) return `${parent}/${name}`;
      this.childPaths.set(parent, (children = new Map()));
    }
    let path = children.get(name);
    if (path === undefined) {
      // Bounded: a file of ever new element names builds its paths as it goes.
      if (children.size >= CHILD_PATHS_KEPT) return `${parent}/${name}`;
      children.set(name, (path = `${parent}/${name}`));
    }
    return path;
  }

  private root(qualified: string, name: string, attributes: Record<string, string>): void {
    const prefix = name.length === qualified.length ? '' : qualified.slice(0, qualified.length - name.length - 1);
    const uri = attributes[prefix === '' ? 'xmlns' : `xmlns:${prefix}`] ?? '';
    const found = PAIN001_NAMESPACES[uri];
    if (name !== 'Document' || found === undefined) refuse(`not a pain.001.001.03 or .09 document: its root is <${name}> in the namespace "${uri || '(none)'}"`);
    this.version = found;
  }

  /** The prefixes an element declares (xmlns:p="..."), in scope until it closes. */
  private declare(attributes: Record<string, string> | null): void {
    let declared: string[] | undefined;
    if (attributes) for (const attribute in attributes) {
      if (attribute.startsWith('xmlns:')) {
        const prefix = attribute.slice(6);
        (declared ??= []).push(prefix);
        this.prefixes.set(prefix, (this.prefixes.get(prefix) ?? 0) + 1);
      } else if (attribute.includes(':')) this.bound(attribute);
    }
    this.declared.push(declared);
  }

  /** A prefixed name's prefix must be declared (as saxes's namespace processing holds it). */
  private bound(qualified: string): void {
    const prefix = qualified.slice(0, qualified.indexOf(':'));
    if (prefix !== 'xmlns' && !this.prefixes.get(prefix)) throw new BatchFileError('xml_syntax', null, `not well-formed XML: unbound namespace prefix: "${prefix}".`);
  }

  private keep(block: Block, key: string, value: string): void {
    if (!block.elements.has(key)) block.elements.set(key, value);
    // A repeated address line is kept as the second (AdrLine#2: the town, where addresses are unstructured).
    else if (key.endsWith('/AdrLine') && !block.elements.has(`${key}#2`)) block.elements.set(`${key}#2`, value);
  }

  private endPayment(block: Block, payment: Tally): void {
    const count = block.elements.get('NbOfTxs');
    const sum = block.elements.get('CtrlSum');
    if (this.hooks.paymentEnded) this.hooks.paymentEnded(this.paymentIndex, count, sum);
    else {
      payment.declaredCount = count;
      payment.declaredSum = sum;
      checkTally(payment, `PmtInf[${this.paymentIndex}]`);
    }
    this.paymentBlock = null;
    this.payment = null;
  }

  private endGroupHeader(block: Block): void {
    this.messageId = block.elements.get('MsgId') ?? '';
    this.group.declaredCount = block.elements.get('NbOfTxs');
    this.group.declaredSum = block.elements.get('CtrlSum');
    this.groupHeader = null;
  }

  private endTransfer(block: Block): void {
    this.transfer = null;
    const paymentBlock = this.paymentBlock;
    const payment = this.payment;
    if (!paymentBlock || !payment) return;
    this.transferIndex += 1;
    const line = this.transferIndex + 1;
    const amount = block.elements.get('Amt/InstdAmt') ?? block.elements.get('Amt/EqvtAmt/Amt');
    const value = amount === undefined ? null : parseDecimal(amount);
    // An amount the control sums cannot add cannot be checked against them: the file is refused, never paid in part.
    if (amount !== undefined && value === null) {
      throw new BatchFileError('control_totals', line, `${this.where(line)}: Amt "${amount}" is not an ISO 20022 decimal (digits, a point, at most 18 digits before it and 17 after), so the control sums cannot count it: nothing of the file is sent`);
    }
    // The control sums add every amount as written, whatever its currency (as ISO 20022 defines CtrlSum).
    if (value !== null) {
      payment.sum += value;
      this.group.sum += value;
    }
    payment.count += 1;
    this.group.count += 1;
    const { fields, issues } = mapTransaction(block.elements, paymentBlock.elements, this.mapping);
    const id = block.elements.get('PmtId/EndToEndId');
    if (id !== undefined) this.noteEndToEnd(line, id);
    const row = issues.length === 0 ? { line, fields } : { line, fields, issues };
    if (this.hooks.row) this.hooks.row(row);
    else this.ready.push(row);
    this.hooks.seen?.({ line, paymentId: paymentBlock.elements.get('PmtInfId') ?? '', endToEndId: id ?? '', amount: amount ?? '', currency: block.elements.get('Amt/InstdAmt@Ccy') ?? block.elements.get('Amt/EqvtAmt/Amt@Ccy') ?? '' });
  }
}

/** The columns of a pain.001 row, each labelled by the element it comes from. */
export const COLUMNS: ColumnPlan = { fields: [], labels: SOURCES as Partial<Record<Field, string>>, warnings: [] };

/** A saxes parser that feeds `walk`, refusing a DOCTYPE, a processing instruction and XML that is not well-formed. */
export function pain001Parser(walk: Pain001Walk): SaxesParser<{ position: false }> {
  const parser = new SaxesParser({ position: false });
  parser.on('doctype', () => refuse('the file has a DOCTYPE: refused outright (it is how entities and external references get in; a pain.001 never needs one)'));
  parser.on('processinginstruction', (pi) => refuse(`the file has a processing instruction <?${pi.target}?>: refused`));
  parser.on('error', (error) => {
    throw new BatchFileError('xml_syntax', null, `not well-formed XML: ${error.message}`);
  });
  parser.on('opentag', (tag: SaxesTag) => walk.openTag(tag.name, tag.attributes as Record<string, string>));
  parser.on('text', (chunk) => walk.addText(chunk));
  parser.on('cdata', (chunk) => walk.addText(chunk));
  parser.on('closetag', () => walk.closeTag());
  return parser;
}

