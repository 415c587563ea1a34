/**
 * A pain.001 checked on every core, as a CSV file is (parallel-check.ts):
 * this thread reads the bytes (hash, size limit, UTF-8) and cuts the text
 * into its transfers and the rest (pain001-cut.ts). It parses the rest
 * itself, so that what makes the file whole stays its own word: the root and
 * its namespace, a DOCTYPE refused, the nesting, the closing tag, the group
 * header's and each PmtInf's NbOfTxs and CtrlSum. Runs of whole transfers of
 * one PmtInf, with that PmtInf's own elements, are parsed, mapped and checked
 * on the check pool's threads (pain001-segment.ts) and come back in file
 * order with their count and exact sum, which the control totals are checked
 * against as each PmtInf's end is reached.
 *
 * A file this thread refuses while reading ahead is read again on one thread
 * (pain001-reader.ts) for its error, so that every refusal is worded as one
 * thread words it.
 */
import { createHash } from 'node:crypto';
import type { Issue } from '../../validate/issue.js';
import type { RowRuleOptions } from '../../validate/row-rules.js';
import { CheckPool } from '../check-pool.js';
import { BatchFileError } from '../file-error.js';
import { checkSize } from '../file-size.js';
import type { ReaderOptions } from '../opened-batch.js';
import type { ParallelCheck } from '../parallel-check.js';
import { checkers } from '../parallel-check.js';
import type { ByteState } from '../text-chunks.js';
import { textChunks } from '../text-chunks.js';
import type { CheckedSegment } from '../segment-check.js';
import { workerScript } from '../../worker-script.js';
import type { MappingOptions } from './pain001-fields.js';
import { TransferCutter } from './pain001-cut.js';
import { openPain001 } from './pain001-reader.js';
import type { Pain001Segment, Pain001SegmentTask } from './pain001-segment.js';
import { checkPain001Segment } from './pain001-segment.js';
import type { Tally } from './pain001-walk.js';
import { COLUMNS, Pain001Walk, checkTally, pain001Parser } from './pain001-walk.js';

/** Characters of transfers per piece: some 150 transfers; as for CSV (parallel-check.ts), small pieces keep memory low. */
const SEGMENT_CHARS = 64 * 1024;
/**
 * Pieces given to the worker thread at once, and in flight per checker. This thread reads and cuts the whole file and
 * checks pieces too, for some milliseconds each, in which it cannot hand the worker its next: with two given, the
 * worker waited (idle 40 to 48% of the time once its pieces got cheaper, in a CPU profile of 300,000 transfers, this
 * thread 5 to 9%). Four ahead keep it busy; six in flight per checker let this thread go on reading and checking
 * while the worker works through them. Each piece is some 64 KB of text in flight, and its checked rows.
 */
const WORKER_AHEAD = 4;
const PIECES_PER_CHECKER = 6;

type Options = { reader: ReaderOptions; rules: RowRuleOptions; keepRows: boolean };

/** A PmtInf's end, in file order among the pieces: its tally is checked once the pieces before it are in. */
interface PaymentEnd {
  payment: number;
  declaredCount: string | undefined;
  declaredSum: string | undefined;
}

type InOrder = Promise<Pain001Segment> | PaymentEnd;

/** Opens `path` (a .xml pain.001) for checking in parallel, or null when it is to be read on one thread. */
export async function checkPain001InParallel(path: string, options: Options): Promise<ParallelCheck | null> {
  const who = checkers(options.keepRows);
  if (who.workers === 0) return null;
  const size = await checkSize(path, options.reader.maxFileBytes);
  if (size < options.reader.parallelMinBytes) return null;
  const state: ByteState = { hash: createHash('sha256'), bytes: 0, lines: 1 };
  const mapping = options.reader.iso20022 ?? { senders: {}, allowEquivalentAmount: false };
  const ends: PaymentEnd[] = [];
  const walk = new Pain001Walk(options.reader, mapping, { paymentEnded: (payment, declaredCount, declaredSum) => ends.push({ payment, declaredCount, declaredSum }) });
  return {
    delimiter: null,
    columns: COLUMNS,
    segments: inOrder(path, { ...options, mapping, who }, walk, ends, state),
    sha256: () => state.hash.copy().digest('hex'),
    place(issue: Issue): Issue {
      const cell = `${walk.where(issue.line)}: ${issue.column}`;
      return { ...issue, cell, message: `${cell}: ${issue.message}` };
    },
  };
}

/** The error reading the file on one thread ends with, or null. */
async function oneThreadError(path: string, reader: ReaderOptions, mapping: MappingOptions): Promise<BatchFileError | null> {
  try {
    for await (const _row of (await openPain001(path, reader, mapping)).rows) void _row;
  } catch (error) {
    if (error instanceof BatchFileError) return error;
    throw error;
  }
  return null;
}

/** The pieces being read and cut: the run of transfers not yet sent, and the tallies of the PmtInf blocks. */
class Cutting {
  readonly waiting: InOrder[] = [];
  private parts: string[] = [];
  private chars = 0;
  private task: Omit<Pain001SegmentTask, 'text'> | null = null;
  private index = 0;

  constructor(
    private readonly pool: CheckPool<Pain001SegmentTask, Pain001Segment>,
    private readonly walk: Pain001Walk,
    private readonly ends: PaymentEnd[],
    private readonly shared: Pick<Pain001SegmentTask, 'mapping' | 'rules' | 'maxRowCharacters' | 'keepRows'>,
  ) {}

  /** A piece of the text, in file order (see pain001-cut.ts). */
  take(piece: string, transfer: boolean, parser: { write(text: string): unknown }): void {
    if (transfer) {
      const line = this.walk.countTransfer();
      this.task ??= {
        ...this.shared, index: this.index, startLine: line,
        resume: { version: this.walk.version ?? '09', payment: this.walk.paymentElements(), paymentIndex: this.walk.paymentNumber, paymentFirstLine: this.walk.paymentFirstLine(), transfersBefore: line - 2, prefixes: this.walk.prefixesInScope() },
      };
      this.parts.push(piece);
      this.chars += piece.length;
      if (this.chars >= SEGMENT_CHARS) this.send();
      return;
    }
    // Anything but the space between transfers ends the run: the PmtInf's elements may change, or it may end.
    if (piece.includes('<')) this.send();
    // The space between two transfers is inside a PmtInf, where it is always well-formed and says nothing: not parsed.
    else if (piece.trim() === '') return;
    parser.write(piece);
    if (this.ends.length > 0) for (const end of this.ends.splice(0)) this.waiting.push(end);
  }

  send(): void {
    if (this.task === null) return;
    const checked = this.pool.check({ ...this.task, text: this.parts.join('') });
    // Its failure is thrown where it is awaited, in file order.
    checked.catch(() => {});
    this.waiting.push(checked);
    this.index += 1;
    this.task = null;
    this.parts = [];
    this.chars = 0;
  }
}

/** The tallies that pieces coming back in order add to, checked at each PmtInf's end and the group's. */
class Tallies {
  private readonly payments = new Map<number, Tally>();

  constructor(private readonly walk: Pain001Walk) {}

  add(segment: Pain001Segment): void {
    const tally = this.payments.get(segment.payment) ?? { count: 0, sum: 0n };
    this.payments.set(segment.payment, tally);
    const sum = BigInt(segment.sum);
    tally.count += segment.transfers;
    tally.sum += sum;
    this.walk.group.count += segment.transfers;
    this.walk.group.sum += sum;
    for (let at = 0; at < segment.rows; at++) {
      const id = segment.endToEndIds[at];
      if (id !== null && id !== undefined) this.walk.noteEndToEnd(segment.lines[at] as number, id);
    }
  }

  end({ payment, declaredCount, declaredSum }: PaymentEnd): void {
    const tally = this.payments.get(payment) ?? { count: 0, sum: 0n };
    this.payments.delete(payment);
    checkTally({ ...tally, declaredCount, declaredSum }, `PmtInf[${payment}]`);
  }
}

async function* inOrder(path: string, options: Options & { mapping: MappingOptions; who: { workers: number; thisThread: boolean } }, walk: Pain001Walk, ends: PaymentEnd[], state: ByteState): AsyncGenerator<CheckedSegment> {
  const pool = new CheckPool<Pain001SegmentTask, Pain001Segment>(workerScript(import.meta.url, '../check-worker.js'), options.who.workers, options.who.thisThread, checkPain001Segment, { kind: 'pain001' }, WORKER_AHEAD);
  const count = pool.checkers;
  const chunks = textChunks(path, options.reader, state);
  const parser = pain001Parser(walk);
  const cutter = new TransferCutter(Math.max(4 * 1024 * 1024, 4 * options.reader.maxRowCharacters));
  const cutting = new Cutting(pool, walk, ends, { mapping: options.mapping, rules: options.rules, maxRowCharacters: options.reader.maxRowCharacters, keepRows: options.keepRows });
  const tallies = new Tallies(walk);
  const sink = (piece: string, transfer: boolean): void => cutting.take(piece, transfer, parser);
  const next = async (): Promise<CheckedSegment | null> => {
    const item = cutting.waiting.shift() as InOrder;
    if (!('then' in item)) {
      tallies.end(item);
      return null;
    }
    const segment = await item;
    if (segment.error === null) tallies.add(segment);
    return segment;
  };
  try {
    let failure: unknown = null;
    try {
      if (!options.who.thisThread) await pool.ready;
      for await (const chunk of chunks) {
        cutter.push(chunk, sink);
        while (cutting.waiting.length > 0 && (cutting.waiting.length >= PIECES_PER_CHECKER * count || !('then' in (cutting.waiting[0] as InOrder)))) {
          const segment = await next();
          if (segment) yield segment;
        }
      }
      cutter.end(sink);
      cutting.send();
      parser.close();
    } catch (error) {
      // Read ahead: the pieces before come first, as one thread gives them, then its own words for the error.
      failure = error;
    }
    while (cutting.waiting.length > 0) {
      const segment = await next();
      if (segment) yield segment;
    }
    if (failure !== null) throw failure instanceof BatchFileError ? ((await oneThreadError(path, options.reader, options.mapping)) ?? failure) : failure;
    if (!walk.ended) throw new BatchFileError('xml_not_whole', null, 'the file ends before its closing </Document> tag: it is not whole (still being written, or cut short)');
    checkTally(walk.group, 'GrpHdr');
    if (walk.group.count === 0) throw new BatchFileError('no_rows', null, 'the file holds no credit transfer (CdtTrfTxInf)');
  } finally {
    try {
      await chunks.return(undefined);
    } finally {
      await pool.close();
    }
  }
}
