/**
 * A CSV batch file checked on every core: this thread reads the bytes (hash,
 * size limit, UTF-8), cuts the text into pieces of whole records (see
 * record-boundaries.ts) and hands them to worker threads, which parse and check
 * them (segment-check.ts), and checks some itself when it has no rows to store
 * (check-pool.ts); the pieces come back in file order. At most two pieces per
 * checker are in flight, so memory stays bounded whatever the file.
 *
 * Used for files large enough to gain from it; a file whose lines end with a
 * lone carriage return, or whose header does not parse, is read on one thread
 * (reader.ts), which words every problem the same way.
 */
import { availableParallelism } from 'node:os';
import { createHash } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import type { Issue } from '../validate/issue.js';
import type { RowRuleOptions } from '../validate/row-rules.js';
import type { ColumnPlan } from './columns.js';
import { planColumns } from './columns.js';
import type { Delimiter } from './delimiter.js';
import { detectDelimiter } from './delimiter.js';
import { BatchFileError } from './file-error.js';
import { checkSize } from './file-size.js';
import type { ReaderOptions } from './opened-batch.js';
import { readFirstLine } from './reader.js';
import type { ByteState } from './text-chunks.js';
import { textChunks } from './text-chunks.js';
import type { LineEnd } from './record-boundaries.js';
import { RecordBoundaries } from './record-boundaries.js';
import type { CheckedSegment, SegmentTask } from './segment-check.js';
import { CheckPool } from './check-pool.js';
import { workerScript } from '../worker-script.js';

/**
 * Characters per piece: large enough that handing it over costs little, small enough to keep every worker busy and
 * memory low. A piece of about 650 rows: what is in flight, in the worker and in this thread, is what the pieces
 * and their checked rows hold. `run`'s peak on 1,000,000 rows: 156 MB at 512 K characters,
 * 141 to 144 at 128 K, 133 and 134 at 64 K, 134 at 32 K, at the same speed; bench:validate alike.
 */
const SEGMENT_CHARS = 64 * 1024;
/**
 * Pieces in flight per checker. The pieces are handed out only as the rows of the earlier ones are taken, so a
 * checker waits whenever this thread stores a chunk of rows in one go; intake stores small chunks (intake.ts) so
 * that two are enough. `run` taking in 1,000,000 rows, the file's pages on disk first, chunks of 500: at two,
 * 27.5 to 28.4 s (three runs), peak 131 to 132 MB; at four, 22.5 to 24.0 s, 134 to 137 MB; at six, 25.2 to 27.4 s,
 * 134 to 136 MB. At two with chunks of 250: 24.8 and 26.0 s, 133 and 135 MB. (Peaks vary by some 5 MB run to run.)
 */
const PIECES_PER_CHECKER = 2;

export interface ParallelCheck {
  /** null for a pain.001 (iso20022/pain001-parallel.ts). */
  delimiter: Delimiter | null;
  columns: ColumnPlan;
  /** The pieces, checked, in file order. The last one may carry the error that ends the file. */
  segments: AsyncGenerator<CheckedSegment>;
  sha256(): string;
  /** A pain.001's issues found across rows, placed at their transfer (the pieces' own issues come placed). */
  place?(issue: Issue): Issue;
}

/**
 * Who checks the pieces: nobody on a single core (one thread reads the file);
 * else one checker per core, at most four. When this thread has the rows to
 * store (intake), that is work enough for it: worker threads check. When it
 * has not (validate), it checks too, beside one worker fewer: a worker thread
 * costs some 24 MB before its first row (its own copy of the modules and of
 * libphonenumber's metadata), and its pieces are copied to it and back.
 */
export function checkers(keepRows = false): { workers: number; thisThread: boolean } {
  const cores = availableParallelism();
  if (cores < 2) return { workers: 0, thisThread: false };
  return { workers: Math.min(4, cores) - 1, thisThread: !keepRows };
}

/** Opens `path` for checking in parallel, or null when it is to be read on one thread (see above). */
export async function checkCsvInParallel(path: string, options: { reader: ReaderOptions; rules: RowRuleOptions; keepRows: boolean }): Promise<ParallelCheck | null> {
  const who = checkers(options.keepRows);
  if (who.workers === 0 || /\.(xlsx|xml)$/i.test(path)) return null;
  const size = await checkSize(path, options.reader.maxFileBytes);
  // Smaller files (batch.parallel_min_bytes) are read on one thread: starting workers would cost more than it saves.
  if (size < options.reader.parallelMinBytes) return null;
  const state: ByteState = { hash: createHash('sha256'), bytes: 0, lines: 1 };
  const chunks = textChunks(path, options.reader, state);
  try {
    return await openedInParallel(chunks, state, options, who);
  } catch (error) {
    // A file refused at its header is closed now, not when its handle is collected.
    await chunks.return(undefined);
    throw error;
  }
}

async function openedInParallel(chunks: AsyncGenerator<string>, state: ByteState, options: { reader: ReaderOptions; rules: RowRuleOptions; keepRows: boolean }, who: { workers: number; thisThread: boolean }): Promise<ParallelCheck | null> {
  const { firstLine, buffered } = await readFirstLine(chunks, options.reader.maxRowCharacters);
  const lf = buffered.indexOf('\n');
  // Lines ended by a lone carriage return, no line end at all, a blank first line, or a header over the row limit: one
  // thread, which says what is wrong with each.
  if (lf === -1 || firstLine.slice(0, -1).includes('\r') || firstLine.trim() === '') return stop(chunks);
  const delimiter = options.reader.delimiter === 'auto' ? detectDelimiter(firstLine) : options.reader.delimiter;
  // csv-parse ends every record with the line end the first line has.
  const lineEnd: LineEnd = firstLine.endsWith('\r') ? '\r\n' : '\n';
  const headerEnd = new RecordBoundaries(delimiter.charCodeAt(0), lineEnd).firstEnd(buffered);
  // A header over several lines (a quoted line end in it): one thread.
  if (headerEnd !== lf + 1 || headerEnd > options.reader.maxRowCharacters) return stop(chunks);
  let header: string[];
  try {
    header = (parse(buffered.slice(0, headerEnd), { delimiter, bom: true, trim: true, relax_quotes: true }) as string[][])[0] ?? [];
  } catch {
    return stop(chunks);
  }
  if (header.length === 0) return stop(chunks);
  const columns = planColumns(header, options.reader.columnMapping, options.reader.maxColumns);
  const task = { delimiter, lineEnd, columns, rules: options.rules, maxRowCharacters: options.reader.maxRowCharacters, keepRows: options.keepRows };
  return {
    delimiter,
    columns,
    segments: inOrder(chunks, buffered, headerEnd, task, who),
    sha256: () => state.hash.copy().digest('hex'),
  };
}

async function stop(chunks: AsyncGenerator<string>): Promise<null> {
  await chunks.return(undefined);
  return null;
}

type Shared = Omit<SegmentTask, 'index' | 'text' | 'startLine'>;

/** Cuts the text into pieces, has them checked, and yields them in order. */
async function* inOrder(chunks: AsyncGenerator<string>, buffered: string, headerEnd: number, shared: Shared, who: { workers: number; thisThread: boolean }): AsyncGenerator<CheckedSegment> {
  const pool = new CheckPool(workerScript(import.meta.url, 'check-worker.js'), who.workers, who.thisThread);
  const count = pool.checkers;
  const boundaries = new RecordBoundaries(shared.delimiter.charCodeAt(0), shared.lineEnd);
  const waiting: Promise<CheckedSegment>[] = [];
  const oldest = (): Promise<CheckedSegment> => waiting.shift() as Promise<CheckedSegment>;
  let index = 0;
  // Lines as csv-parse counts them (quote-aware: the scanner counts them as it goes): where the next piece starts,
  // and where the last record end found is.
  boundaries.lastEnd(buffered.slice(0, headerEnd));
  let line = 1 + boundaries.linesToLastEnd;
  let endLine = line;
  const send = (text: string, nextLine: number): void => {
    const checked = pool.check({ ...shared, index, text, startLine: line });
    // Its failure is thrown where it is awaited, in file order; a piece failing while an earlier one is awaited must
    // not end the process as an unhandled rejection meanwhile.
    checked.catch(() => {});
    waiting.push(checked);
    index += 1;
    line = nextLine;
  };
  try {
    let pending = '';
    let end = -1;
    const take = (text: string): void => {
      const last = boundaries.lastEnd(text);
      if (last !== -1) {
        end = pending.length + last;
        endLine = 1 + boundaries.linesToLastEnd;
      }
      pending += text;
    };
    take(buffered.slice(headerEnd));
    // Nothing to read for until a worker can check: and reading while one starts would grow this thread's young
    // generation for good (a worker's start puts the heap's flags back, see check-pool.ts).
    if (!who.thisThread) await pool.ready;
    let failure: unknown = null;
    try {
      for (;;) {
        if (pending.length >= SEGMENT_CHARS && end > 0) {
          send(pending.slice(0, end), endLine);
          pending = pending.slice(end);
          end = -1;
        }
        while (waiting.length >= PIECES_PER_CHECKER * count) yield await oldest();
        const next = await chunks.next();
        if (next.done) break;
        take(next.value);
      }
      if (pending.length > 0) send(pending, line);
    } catch (error) {
      // The bytes ended the file (too large, not UTF-8, binary): the rows before come first, as one thread gives them.
      failure = error;
    }
    while (waiting.length > 0) yield await oldest();
    if (failure !== null) throw failure;
  } finally {
    try {
      await chunks.return(undefined);
    } finally {
      // Always: the workers keep the process alive until closed.
      await pool.close();
    }
  }
}

/** A segment's error as the error one thread would have thrown. */
export function segmentError(error: NonNullable<CheckedSegment['error']>): BatchFileError {
  return new BatchFileError(error.code, error.line, error.message);
}
