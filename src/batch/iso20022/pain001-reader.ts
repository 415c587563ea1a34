/**
 * Reads an ISO 20022 customer credit transfer initiation (pain.001.001.03 or
 * .09, by its namespace) as a batch: streamed with saxes, never held whole.
 * Each CdtTrfTxInf becomes a row (pain001-fields.ts maps it); the group
 * header's and every PmtInf's NbOfTxs and CtrlSum are the file's own control
 * totals, checked exactly, and a file that does not match them, does not end
 * with its closing tag, or has a DOCTYPE (the way to entities and external
 * references) is refused whole. Rows are numbered as lines are in a CSV file
 * (the first transfer is 2), and every issue is placed at its transfer:
 * `PmtInf[2]/CdtTrfTxInf[17] (E2E INV-2291): CdtrAcct/Id/IBAN`.
 */
import { createHash } from 'node:crypto';
import { SaxesParser } from 'saxes';
import type { SaxesTagNS } from 'saxes';
import type { Field } from '../../validate/fields.js';
import type { Issue } from '../../validate/issue.js';
import type { ColumnPlan } from '../columns.js';
import { BatchFileError } from '../file-error.js';
import { checkSize } from '../file-size.js';
import type { BatchRow, OpenedBatch, ReaderOptions } from '../opened-batch.js';
import type { ByteState } from '../reader.js';
import { textChunks } from '../reader.js';
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
  readonly elements = new Map<string, string>();
  constructor(readonly depth: number) {}
}

/** The running count and sum that a NbOfTxs and CtrlSum are checked against. */
interface Tally {
  count: number;
  sum: bigint;
  declaredCount?: string;
  declaredSum?: string;
}

function checkTally(tally: Tally, where: string): void {
  if (tally.declaredCount !== undefined && tally.declaredCount !== String(tally.count)) {
    throw new BatchFileError('control_totals', null, `${where}/NbOfTxs says ${tally.declaredCount} transfers, the file holds ${tally.count}: nothing of it is sent`);
  }
  if (tally.declaredSum !== undefined) {
    const declared = parseDecimal(tally.declaredSum);
    if (declared === null) throw new BatchFileError('control_totals', null, `${where}/CtrlSum "${tally.declaredSum}" is not a decimal number`);
    if (declared !== tally.sum) throw new BatchFileError('control_totals', null, `${where}/CtrlSum says ${tally.declaredSum}, the transfers' amounts add up to ${formatDecimal(tally.sum)}: nothing of it is sent`);
  }
}

/** The columns of a pain.001 row, each labelled by the element it comes from. */
const COLUMNS: ColumnPlan = { fields: [], labels: SOURCES as Partial<Record<Field, string>>, warnings: [] };

/** Where a transfer is, for messages, kept for the most recent rows (a late finding about an old row names it without its E2E). */
const PLACES_KEPT = 4096;

/** Told each transfer as read (the pain.002 writer reads the file again through it). */
type Seen = (transfer: TransferRef) => void;

/**
 * The reader's state as saxes walks the file: the open elements, the block
 * being collected (group header, payment, transfer), the control tallies and
 * the rows ready to be yielded. openPain001 feeds it saxes's events.
 */
class Pain001Walk {
  readonly ready: BatchRow[] = [];
  readonly group: Tally = { count: 0, sum: 0n };
  version: '03' | '09' | null = null;
  messageId = '';
  ended = false;
  private readonly stack: string[] = [];
  private payment: Tally | null = null;
  private paymentIndex = 0;
  private transferIndex = 0;
  private groupHeader: Block | null = null;
  private paymentBlock: Block | null = null;
  private transfer: Block | null = null;
  private text = '';
  private readonly firstLineOfPayment: { line: number; index: number }[] = [];
  private readonly endToEnd = new Map<number, string>();

  constructor(
    private readonly options: ReaderOptions,
    private readonly mapping: MappingOptions,
    private readonly seen?: Seen,
  ) {}

  openTag(tag: SaxesTagNS): void {
    if (this.stack.length === 0) {
      const found = PAIN001_NAMESPACES[tag.uri];
      if (tag.local !== 'Document' || found === undefined) refuse(`not a pain.001.001.03 or .09 document: its root is <${tag.local}> in the namespace "${tag.uri || '(none)'}"`);
      this.version = found as '03' | '09';
    }
    this.stack.push(tag.local);
    this.text = '';
    const depth = this.stack.length;
    const name = tag.local;
    if (depth === 3 && name === 'GrpHdr') this.groupHeader = new Block(depth);
    else if (depth === 3 && name === 'PmtInf') {
      this.paymentIndex += 1;
      this.paymentBlock = new Block(depth);
      this.payment = { count: 0, sum: 0n };
      this.firstLineOfPayment.push({ line: this.transferIndex + 2, index: this.paymentIndex });
    } else if (depth === 4 && name === 'CdtTrfTxInf' && this.paymentBlock) this.transfer = new Block(depth);
    const block = this.transfer ?? this.paymentBlock ?? this.groupHeader;
    if (block) for (const [attribute, value] of Object.entries(tag.attributes)) this.keep(block, `${this.relative(block)}@${attribute}`, value.value);
  }

  /** Text or CDATA (CDATA is text too: the same bound as plain text). */
  addText(chunk: string): void {
    if (this.text.length + chunk.length > this.options.maxRowCharacters) refuse(`the element ${this.stack.join('/')} holds more than ${this.options.maxRowCharacters} characters (batch.max_row_characters)`);
    this.text += chunk;
  }

  closeTag(): void {
    const depth = this.stack.length;
    const block = this.transfer ?? this.paymentBlock ?? this.groupHeader;
    if (block && depth > block.depth && this.text.trim() !== '') this.keep(block, this.relative(block), this.text.trim());
    this.text = '';
    if (this.transfer && depth === this.transfer.depth) this.endTransfer(this.transfer);
    else if (this.paymentBlock && depth === this.paymentBlock.depth && this.payment) this.endPayment(this.paymentBlock, this.payment);
    else if (this.groupHeader && depth === this.groupHeader.depth) this.endGroupHeader(this.groupHeader);
    else if (depth === 1) this.ended = true;
    this.stack.pop();
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
    const id = this.endToEnd.get(line);
    return `PmtInf[${payment}]/CdtTrfTxInf[${line - first + 1}]${id === undefined ? '' : ` (E2E ${id})`}`;
  }

  header(): Pain001Header {
    const group = this.group;
    return { version: this.version ?? '03', messageId: this.messageId, count: group.declaredCount ?? String(group.count), sum: group.declaredSum ?? formatDecimal(group.sum) };
  }

  private relative(block: Block): string {
    return this.stack.slice(block.depth).join('/');
  }

  private keep(block: Block, key: string, value: string): void {
    if (!block.elements.has(key)) block.elements.set(key, value);
    // A repeated address line is kept as the second (AdrLine#2: the town, where addresses are unstructured).
    else if (key.endsWith('/AdrLine') && !block.elements.has(`${key}#2`)) block.elements.set(`${key}#2`, value);
  }

  private endPayment(block: Block, payment: Tally): void {
    payment.declaredCount = block.elements.get('NbOfTxs');
    payment.declaredSum = block.elements.get('CtrlSum');
    checkTally(payment, `PmtInf[${this.paymentIndex}]`);
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
    if (id !== undefined) {
      this.endToEnd.set(line, id);
      if (this.endToEnd.size > PLACES_KEPT) this.endToEnd.delete(this.endToEnd.keys().next().value as number);
    }
    this.ready.push(issues.length === 0 ? { line, fields } : { line, fields, issues });
    this.seen?.({ line, paymentId: paymentBlock.elements.get('PmtInfId') ?? '', endToEndId: id ?? '', amount: amount ?? '', currency: block.elements.get('Amt/InstdAmt@Ccy') ?? block.elements.get('Amt/EqvtAmt/Amt@Ccy') ?? '' });
  }
}

function refuse(message: string): never {
  throw new BatchFileError('xml_refused', null, message);
}

/** A saxes parser that feeds `walk`, refusing a DOCTYPE, a processing instruction and XML that is not well-formed. */
function pain001Parser(walk: Pain001Walk): SaxesParser<{ xmlns: true; position: false }> {
  const parser = new SaxesParser({ xmlns: true, position: false });
  parser.on('doctype', () => refuse('the file has a DOCTYPE: refused outright (it is how entities and external references get in; a pain.001 never needs one)'));
  parser.on('processinginstruction', (pi) => refuse(`the file has a processing instruction <?${pi.target}?>: refused`));
  parser.on('error', (error) => {
    throw new BatchFileError('xml_syntax', null, `not well-formed XML: ${error.message}`);
  });
  parser.on('opentag', (tag: SaxesTagNS) => walk.openTag(tag));
  parser.on('text', (chunk) => walk.addText(chunk));
  parser.on('cdata', (chunk) => walk.addText(chunk));
  parser.on('closetag', () => walk.closeTag());
  return parser;
}

/** The rows as the file's chunks are parsed; at its end, whether it is whole and its group header's control totals hold. */
async function* walkRows(chunks: AsyncGenerator<string>, parser: SaxesParser<{ xmlns: true; position: false }>, walk: Pain001Walk): AsyncGenerator<BatchRow> {
  try {
    for await (const chunk of chunks) {
      parser.write(chunk);
      yield* walk.ready.splice(0);
    }
    parser.close();
    yield* walk.ready.splice(0);
  } finally {
    await chunks.return(undefined);
  }
  if (!walk.ended) throw new BatchFileError('xml_not_whole', null, 'the file ends before its closing </Document> tag: it is not whole (still being written, or cut short)');
  checkTally(walk.group, 'GrpHdr');
  if (walk.group.count === 0) throw new BatchFileError('no_rows', null, 'the file holds no credit transfer (CdtTrfTxInf)');
}

/** `seen`: told each transfer as read (the pain.002 writer reads the file again through it). */
export async function openPain001(path: string, options: ReaderOptions, mapping: MappingOptions, seen?: Seen): Promise<OpenedBatch & { header(): Pain001Header }> {
  await checkSize(path, options.maxFileBytes);
  const state: ByteState = { hash: createHash('sha256'), bytes: 0, lines: 1 };
  const walk = new Pain001Walk(options, mapping, seen);
  const parser = pain001Parser(walk);
  const chunks = textChunks(path, options, state);
  return {
    delimiter: null,
    columns: COLUMNS,
    rows: walkRows(chunks, parser, walk),
    sha256: () => state.hash.copy().digest('hex'),
    header: () => walk.header(),
    place(issue: Issue): Issue {
      const cell = `${walk.where(issue.line)}: ${issue.column}`;
      return { ...issue, cell, message: `${cell}: ${issue.message}` };
    },
  };
}
