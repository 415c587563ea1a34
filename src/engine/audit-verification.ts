/**
 * The whole trail verified (`paybatch audit verify`): every entry's hash made
 * again from its fields, every link, every version, and the first break named.
 *
 * Where the store checks ranges at once (SQLite: audit/chain-range.ts on
 * threads), that check finds the first entry at fault; ChainWalker then walks
 * again from the entries a window before it (what it remembers to tell a move
 * from an insertion) to name the break as a walk from the start names it,
 * with the same message. Elsewhere, or when the threads could not do it, the
 * trail is walked page by page, as it always was.
 */
import type { AuditCheckpoint, AuditStore } from '../store/port.js';
import type { AuditEntry, Break } from '../audit/chain.js';
import { ChainWalker, GENESIS, WINDOW } from '../audit/chain.js';
import { addCounts, firstFault } from '../audit/chain-range.js';
import { countEntry } from '../audit/entry-batch.js';

const PAGE = 5_000;

export interface WholeVerification {
  /** Entries looked at: all of them, or up to and including the one where the chain broke. */
  entries: number;
  /** The trail's last entry, when intact. */
  head: { seq: number; hash: string };
  broken: Break | null;
  /** Entries by action and by batch (when intact). */
  counts: AuditCheckpoint['counts'];
  /** The sequence number of the last entry looked at (0 when none was): a head given to check is looked for up to there. */
  reached: number;
}

/**
 * Walks entries in order, each checked with a look at the one after it (a move shows there), until the first break;
 * counting on from `counts` (the console extends its kept verification this way, audit-kept.ts).
 */
export class Walk {
  readonly walker = new ChainWalker();
  broken: Break | null = null;
  reached = 0;
  private current: AuditEntry | null = null;

  constructor(readonly counts: AuditCheckpoint['counts'] = { actions: {}, batches: {} }) {}

  /** False once broken. */
  feed(entry: AuditEntry): boolean {
    if (this.broken) return false;
    if (this.current) this.take(this.current, entry);
    this.current = entry;
    return this.broken === null;
  }

  end(): void {
    if (this.current && !this.broken) this.take(this.current);
    this.current = null;
  }

  private take(entry: AuditEntry, following?: AuditEntry): void {
    this.broken = this.walker.next(entry, following);
    this.reached = entry.seq;
    if (!this.broken) countEntry(this.counts, entry);
  }
}

/** Feeds `walk` the entries after `after`, page by page, until the trail ends or breaks. */
export async function walkPages(store: Pick<AuditStore, 'auditEntries'>, walk: Walk, after: number): Promise<void> {
  for (let from = after; ;) {
    const page = await store.auditEntries(from, PAGE);
    for (const entry of page) if (!walk.feed(entry)) return walk.end();
    if (page.length === 0) return walk.end();
    from = Number((page[page.length - 1] as AuditEntry).seq);
  }
}

/** The trail walked from its start, page by page. */
async function walkWhole(store: AuditStore): Promise<WholeVerification> {
  const walk = new Walk();
  await walkPages(store, walk, 0);
  const { walker } = walk;
  return { entries: walker.count, head: walker.head, broken: walk.broken, counts: walk.counts, reached: walk.reached };
}

/** The break at the entry `fault` names (with `index` entries before it), as a walk from the start names it. */
async function breakAt(store: AuditStore, fault: { seq: number; index: number }): Promise<WholeVerification> {
  // The window before it, newest first: a walker resumed from the entry before the window remembers what one from the start would.
  const before = (await store.auditPage({ before: fault.seq }, WINDOW + 1)).reverse();
  const walk = new Walk();
  const resumed = before.length > WINDOW ? before.shift() : undefined;
  if (resumed) walk.walker.resumeFrom(resumed);
  for (const entry of before) walk.feed(entry);
  // From the entry at fault (and the one after it) on: the walk ends at the break.
  if (!walk.broken) await walkPages(store, walk, fault.seq - 1);
  if (!walk.broken) throw new Error('the audit trail changed while it was verified: run paybatch audit verify again');
  const entries = fault.index - before.length + walk.walker.count;
  return { entries, head: walk.walker.head, broken: walk.broken, counts: walk.counts, reached: walk.reached };
}

/** The whole trail verified: by ranges where the store checks them, else walked. */
export async function verifyWholeTrail(store: AuditStore): Promise<WholeVerification> {
  if (!store.checkAuditRanges) return walkWhole(store);
  // The newest entry whatever its action (auditHead leaves some out).
  const [newest] = await store.auditPage({}, 1);
  let ranges;
  try {
    ranges = await store.checkAuditRanges(newest?.seq ?? 0);
  } catch (error) {
    // The threads could not check it (refused, or failed): walked here instead, never skipped, and said.
    process.stderr.write(`paybatch: the audit trail could not be checked on threads (${(error as Error).message}): walked on one instead\n`);
    return walkWhole(store);
  }
  const fault = firstFault(ranges);
  if (fault) return breakAt(store, fault);
  const last = [...ranges].reverse().find((range) => range.last)?.last;
  const entries = ranges.reduce((n, range) => n + range.entries, 0);
  const verifiedHead = last ? { seq: last.seq, hash: last.hash as string } : { seq: 0, hash: GENESIS };
  return { entries, head: verifiedHead, broken: null, counts: addCounts(ranges), reached: verifiedHead.seq };
}
