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

/** `seen`: told each transfer as read (the pain.002 writer reads the file again through it). */
export async function openPain001(path: string, options: ReaderOptions, mapping: MappingOptions, seen?: (transfer: TransferRef) => void): Promise<OpenedBatch & { header(): Pain001Header }> {
  await checkSize(path, options.maxFileBytes);
  const state: ByteState = { hash: createHash('sha256'), bytes: 0, lines: 1 };
  const parser = new SaxesParser({ xmlns: true, position: false });
  const stack: string[] = [];
  const ready: BatchRow[] = [];
  const group: Tally = { count: 0, sum: 0n };
  let payment: Tally | null = null;
  let paymentIndex = 0;
  let transferIndex = 0;
  let version: '03' | '09' | null = null;
  let messageId = '';
  let groupHeader: Block | null = null;
  let paymentBlock: Block | null = null;
  let transfer: Block | null = null;
  let text = '';
  let ended = false;
  const firstLineOfPayment: { line: number; index: number }[] = [];
  const endToEnd = new Map<number, string>();

  const refuse = (message: string): never => {
    throw new BatchFileError('xml_refused', null, message);
  };
  parser.on('doctype', () => refuse('the file has a DOCTYPE: refused outright (it is how entities and external references get in; a pain.001 never needs one)'));
  parser.on('processinginstruction', (pi) => refuse(`the file has a processing instruction <?${pi.target}?>: refused`));
  parser.on('error', (error) => {
    throw new BatchFileError('xml_syntax', null, `not well-formed XML: ${error.message}`);
  });
  parser.on('opentag', (tag: SaxesTagNS) => {
    if (stack.length === 0) {
      const found = PAIN001_NAMESPACES[tag.uri];
      if (tag.local !== 'Document' || found === undefined) refuse(`not a pain.001.001.03 or .09 document: its root is <${tag.local}> in the namespace "${tag.uri || '(none)'}"`);
      version = found as '03' | '09';
    }
    stack.push(tag.local);
    text = '';
    const depth = stack.length;
    const name = tag.local;
    if (depth === 3 && name === 'GrpHdr') groupHeader = new Block(depth);
    else if (depth === 3 && name === 'PmtInf') {
      paymentIndex += 1;
      paymentBlock = new Block(depth);
      payment = { count: 0, sum: 0n };
      firstLineOfPayment.push({ line: transferIndex + 2, index: paymentIndex });
    } else if (depth === 4 && name === 'CdtTrfTxInf' && paymentBlock) transfer = new Block(depth);
    const block = transfer ?? paymentBlock ?? groupHeader;
    if (block) for (const [attribute, value] of Object.entries(tag.attributes)) keep(block, `${relative(block)}@${attribute}`, value.value);
  });
  parser.on('text', (chunk) => {
    if (text.length + chunk.length > options.maxRowCharacters) refuse(`the element ${stack.join('/')} holds more than ${options.maxRowCharacters} characters (batch.max_row_characters)`);
    text += chunk;
  });
  parser.on('cdata', (chunk) => {
    // CDATA is text too: the same bound as plain text.
    if (text.length + chunk.length > options.maxRowCharacters) refuse(`the element ${stack.join('/')} holds more than ${options.maxRowCharacters} characters (batch.max_row_characters)`);
    text += chunk;
  });
  parser.on('closetag', () => {
    const depth = stack.length;
    const block = transfer ?? paymentBlock ?? groupHeader;
    if (block && depth > block.depth && text.trim() !== '') keep(block, relative(block), text.trim());
    text = '';
    if (transfer && depth === transfer.depth) endTransfer(transfer);
    else if (paymentBlock && depth === paymentBlock.depth && payment) {
      payment.declaredCount = paymentBlock.elements.get('NbOfTxs');
      payment.declaredSum = paymentBlock.elements.get('CtrlSum');
      checkTally(payment, `PmtInf[${paymentIndex}]`);
      paymentBlock = null;
      payment = null;
    } else if (groupHeader && depth === groupHeader.depth) {
      messageId = groupHeader.elements.get('MsgId') ?? '';
      group.declaredCount = groupHeader.elements.get('NbOfTxs');
      group.declaredSum = groupHeader.elements.get('CtrlSum');
      groupHeader = null;
    } else if (depth === 1) ended = true;
    stack.pop();
  });

  function relative(block: Block): string {
    return stack.slice(block.depth).join('/');
  }

  function keep(block: Block, key: string, value: string): void {
    if (!block.elements.has(key)) block.elements.set(key, value);
    // A repeated address line is kept as the second (AdrLine#2: the town, where addresses are unstructured).
    else if (key.endsWith('/AdrLine') && !block.elements.has(`${key}#2`)) block.elements.set(`${key}#2`, value);
  }

  function endTransfer(block: Block): void {
    transfer = null;
    if (!paymentBlock || !payment) return;
    transferIndex += 1;
    const line = transferIndex + 1;
    const amount = block.elements.get('Amt/InstdAmt') ?? block.elements.get('Amt/EqvtAmt/Amt');
    const value = amount === undefined ? null : parseDecimal(amount);
    // An amount the control sums cannot add cannot be checked against them: the file is refused, never paid in part.
    if (amount !== undefined && value === null) {
      throw new BatchFileError('control_totals', line, `${where(line)}: Amt "${amount}" is not an ISO 20022 decimal (digits, a point, at most 18 digits before it and 17 after), so the control sums cannot count it: nothing of the file is sent`);
    }
    // The control sums add every amount as written, whatever its currency (as ISO 20022 defines CtrlSum).
    if (value !== null) {
      payment.sum += value;
      group.sum += value;
    }
    payment.count += 1;
    group.count += 1;
    const { fields, issues } = mapTransaction(block.elements, paymentBlock.elements, mapping);
    const id = block.elements.get('PmtId/EndToEndId');
    if (id !== undefined) {
      endToEnd.set(line, id);
      if (endToEnd.size > PLACES_KEPT) endToEnd.delete(endToEnd.keys().next().value as number);
    }
    ready.push(issues.length === 0 ? { line, fields } : { line, fields, issues });
    seen?.({ line, paymentId: paymentBlock.elements.get('PmtInfId') ?? '', endToEndId: id ?? '', amount: amount ?? '', currency: block.elements.get('Amt/InstdAmt@Ccy') ?? block.elements.get('Amt/EqvtAmt/Amt@Ccy') ?? '' });
  }

  const chunks = textChunks(path, options, state);
  async function* rows(): AsyncGenerator<BatchRow> {
    try {
      for await (const chunk of chunks) {
        parser.write(chunk);
        yield* ready.splice(0);
      }
      parser.close();
      yield* ready.splice(0);
    } finally {
      await chunks.return(undefined);
    }
    if (!ended) throw new BatchFileError('xml_not_whole', null, 'the file ends before its closing </Document> tag: it is not whole (still being written, or cut short)');
    checkTally(group, 'GrpHdr');
    if (group.count === 0) throw new BatchFileError('no_rows', null, 'the file holds no credit transfer (CdtTrfTxInf)');
  }

  function where(line: number): string {
    let payment = firstLineOfPayment[0]?.index ?? 1;
    let first = 2;
    for (const block of firstLineOfPayment) {
      if (block.line > line) break;
      payment = block.index;
      first = block.line;
    }
    const id = endToEnd.get(line);
    return `PmtInf[${payment}]/CdtTrfTxInf[${line - first + 1}]${id === undefined ? '' : ` (E2E ${id})`}`;
  }

  return {
    delimiter: null,
    columns: COLUMNS,
    rows: rows(),
    sha256: () => state.hash.copy().digest('hex'),
    header: () => ({ version: version ?? '03', messageId, count: group.declaredCount ?? String(group.count), sum: group.declaredSum ?? formatDecimal(group.sum) }),
    place(issue: Issue): Issue {
      const cell = `${where(issue.line)}: ${issue.column}`;
      return { ...issue, cell, message: `${cell}: ${issue.message}` };
    },
  };
}
