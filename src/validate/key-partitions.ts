/**
 * Rows grouped by a key of up to three 32-bit lanes, without holding a record
 * per row in memory: each row's record (its row number, its key, one more
 * number) goes to one of PARTITIONS partitions by the top bits of its first
 * lane, and a partition's buffer, once full, is handed to a `Spill` (a scratch
 * file, for a batch). Equal keys always meet in one partition, so the groups
 * are found one partition at a time: memory is the buffers plus one partition,
 * whatever the number of rows.
 *
 * Groups come in the order of their keys (partitions by the top bits of the
 * first lane, then the lanes sorted within), each in row order.
 */

/** Where full buffers go and come back from: a scratch file for a batch, memory for a test. */
export interface Spill {
  /** Keeps these words; answers where, to read them back with `get`. */
  put(words: Uint32Array): number;
  /** Fills `into` with the words put at `at` (as many as `into` holds). */
  get(at: number, into: Uint32Array): void;
  /** Gives back what it holds; nothing is read after. */
  close(): void;
}

/** A spill in memory: for tests, and for checking that the partitions find what sorting everything would. */
export class MemorySpill implements Spill {
  private readonly kept: Uint32Array[] = [];

  put(words: Uint32Array): number {
    this.kept.push(words.slice());
    return this.kept.length - 1;
  }

  get(at: number, into: Uint32Array): void {
    into.set(this.kept[at] as Uint32Array);
  }

  close(): void {
    this.kept.length = 0;
  }
}

/**
 * Rows sharing a key, in row order, and each one's extra number. A file of one sender is one group of every row: they
 * are views into the memory the partition was sorted in (not arrays, 8 bytes a row and more, which were the highest
 * point of a million-row validate), valid until the next partition is grouped: read them before asking for more.
 */
export interface KeyGroup {
  rows: Uint32Array;
  extras: Uint32Array;
}

const PARTITION_BITS = 6;
const PARTITIONS = 1 << PARTITION_BITS;
/** Records a partition buffers before it spills: 3 rules × 64 partitions × 256 records × 20 bytes is under 1 MB. */
const BUFFERED_RECORDS = 256;

/** A record: row, up to three lanes, extra. Unused lanes are 0. */
const WIDTH = 5;

/**
 * Arrays for one partition at a time, made once and grown to the largest. A
 * new set for each partition (64 per rule, some 500 KB on a million rows) lived
 * outside V8's heap until it collected them: they piled up at the end of
 * intake, its highest point, and the C allocator kept what they took.
 */
class SortSpace {
  private records = new Uint32Array(0);
  private order = new Uint32Array(0);
  private packed = new Float64Array(0);

  recordsFor(count: number): Uint32Array {
    if (this.records.length < count * WIDTH) this.records = new Uint32Array(grown(count * WIDTH));
    return this.records.subarray(0, count * WIDTH);
  }

  orderFor(count: number): Uint32Array {
    if (this.order.length < count) this.order = new Uint32Array(grown(count));
    return this.order.subarray(0, count);
  }

  packedFor(count: number): Float64Array {
    if (this.packed.length < count) this.packed = new Float64Array(grown(count));
    return this.packed.subarray(0, count);
  }

  /** Once sorted, the packed keys are done with: their memory holds the groups' rows, then their extras (2 × count). */
  membersFor(count: number): Uint32Array {
    this.packedFor(count);
    return new Uint32Array(this.packed.buffer, 0, 2 * count);
  }
}

/** Partitions are about the same size: a tenth more than the first makes growing again rare. */
const grown = (length: number): number => Math.ceil(length * 1.1);

export class KeyPartitions {
  private space = new SortSpace();
  private readonly buffers = Array.from({ length: PARTITIONS }, () => new Uint32Array(BUFFERED_RECORDS * WIDTH));
  private readonly filled = new Uint32Array(PARTITIONS);
  /** Where each partition's spilled buffers are. */
  private readonly spilled: number[][] = Array.from({ length: PARTITIONS }, () => []);

  constructor(private readonly spill: Spill) {}

  add(row: number, a: number, b: number, c: number, extra: number): void {
    const partition = a >>> (32 - PARTITION_BITS);
    const buffer = this.buffers[partition] as Uint32Array;
    let at = (this.filled[partition] as number) * WIDTH;
    buffer[at++] = row;
    buffer[at++] = a;
    buffer[at++] = b;
    buffer[at++] = c;
    buffer[at] = extra;
    const filled = (this.filled[partition] as number) + 1;
    if (filled < BUFFERED_RECORDS) {
      this.filled[partition] = filled;
      return;
    }
    (this.spilled[partition] as number[]).push(this.spill.put(buffer));
    this.filled[partition] = 0;
  }

  /** Every group of two rows or more. */
  *groups(): Generator<KeyGroup> {
    try {
      for (let partition = 0; partition < PARTITIONS; partition++) yield* this.groupsIn(partition);
    } finally {
      // Sized for the largest partition (all of a file whose rows share one sender): not kept past the grouping.
      this.space = new SortSpace();
    }
  }

  private *groupsIn(partition: number): Generator<KeyGroup> {
    const spilled = this.spilled[partition] as number[];
    const buffered = this.filled[partition] as number;
    const count = spilled.length * BUFFERED_RECORDS + buffered;
    if (count < 2) return;
    const records = this.space.recordsFor(count);
    spilled.forEach((at, index) => this.spill.get(at, records.subarray(index * BUFFERED_RECORDS * WIDTH, (index + 1) * BUFFERED_RECORDS * WIDTH)));
    records.set((this.buffers[partition] as Uint32Array).subarray(0, buffered * WIDTH), spilled.length * BUFFERED_RECORDS * WIDTH);
    const lane = (record: number, offset: number): number => records[record * WIDTH + offset] as number;
    const order = sortedByKey(records, count, NATIVE_SORT_LIMIT, this.space);
    const members = this.space.membersFor(count);
    const same = (x: number, y: number): boolean => lane(x, 1) === lane(y, 1) && lane(x, 2) === lane(y, 2) && lane(x, 3) === lane(y, 3);
    let start = 0;
    for (let i = 1; i <= count; i++) {
      if (i < count && same(order[i] as number, order[start] as number)) continue;
      if (i - start > 1) {
        const rows = members.subarray(start, i);
        const extras = members.subarray(count + start, count + i);
        for (let member = 0; member < rows.length; member++) {
          const record = order[start + member] as number;
          rows[member] = lane(record, 0);
          extras[member] = lane(record, 4);
        }
        yield { rows, extras };
      }
      start = i;
    }
  }
}

/** Records a partition can sort natively: their number takes 21 bits beside the 32 of the first lane in one double (53 bits). */
const NATIVE_SORT_LIMIT = 2 ** 21;

/**
 * The numbers of `count` records in the order of their key (lanes 1 to 3),
 * then in their own order (row order). A comparison function called from the
 * sort cost a tenth of `validate` on 300,000 rows, after the workers were done:
 * the first lane and the record's number are packed into one exact double and
 * sorted natively; the few runs that share a first lane but not the others
 * (it is a 32-bit hash) are then put in order by comparison.
 */
export function sortedByKey(records: Uint32Array, count: number, nativeLimit = NATIVE_SORT_LIMIT, space = new SortSpace()): Uint32Array {
  const lane = (record: number, offset: number): number => records[record * WIDTH + offset] as number;
  const byKey = (x: number, y: number): number => lane(x, 1) - lane(y, 1) || lane(x, 2) - lane(y, 2) || lane(x, 3) - lane(y, 3) || x - y;
  const order = space.orderFor(count);
  if (count > nativeLimit) {
    for (let record = 0; record < count; record++) order[record] = record;
    return order.sort(byKey);
  }
  const packed = space.packedFor(count);
  for (let record = 0; record < count; record++) packed[record] = lane(record, 1) * nativeLimit + record;
  packed.sort();
  for (let i = 0; i < count; i++) order[i] = (packed[i] as number) % nativeLimit;
  let start = 0;
  for (let i = 1; i <= count; i++) {
    if (i < count && lane(order[i] as number, 1) === lane(order[start] as number, 1)) continue;
    if (i - start > 1) {
      const run = order.subarray(start, i);
      const first = run[0] as number;
      if (run.some((record) => lane(record, 2) !== lane(first, 2) || lane(record, 3) !== lane(first, 3))) run.sort(byKey);
    }
    start = i;
  }
  return order;
}
