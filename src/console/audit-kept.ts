/**
 * The chain's verification, kept and extended: the store keeps how far the
 * trail was last verified intact (its checkpoint: a sequence number, that
 * entry's hash, when, and the entries counted by action and batch up to
 * there). A view checks that the checkpoint's entry still has its hash, then
 * verifies only the entries after it, and moves the checkpoint by
 * compare-and-set.
 *
 * What a kept result means: entries 1 to N verified intact at that time. An
 * entry before N changed since is not seen here unless it is entry N itself
 * (or the change reaches N): the page says "verified up to N at TIME", and
 * `paybatch audit verify` is the full check, which also puts the checkpoint
 * back to the start when it finds a break, so that the console shows it too.
 */
import type { AuditEntry, Break } from '../audit/chain.js';
import { entryHash, GENESIS } from '../audit/chain.js';
import { Walk, walkPages } from '../engine/audit-verification.js';
import type { AuditCheckpoint, AuditStore } from '../store/port.js';

export interface KeptChain {
  /** The last entry verified intact (0 and no time when none is), and when the checkpoint moved there. */
  verified: { seq: number; at: string | null };
  /** The first break found after the checkpoint, or the checkpoint's own entry changed. */
  broken: Break | null;
  /** The trail's last entry (SEQ:HASH), and how many entries it holds. */
  head: string | null;
  entries: number;
  /** Entries by action and by batch, counted over what was verified. */
  counts: AuditCheckpoint['counts'];
}

type Counts = AuditCheckpoint['counts'];


/** The checkpoint's own entry, if it is still as verified; else the break that shows. */
async function anchorOf(store: AuditStore, kept: AuditCheckpoint): Promise<{ anchor: AuditEntry | null; broken: Break | null }> {
  if (kept.seq === 0) return { anchor: null, broken: null };
  const anchor = await store.auditEntryAt(kept.seq);
  // Its stored hash as kept, and its content still matching it: an edit that left the hash column alone shows here.
  const intact = anchor !== undefined && anchor.hash === kept.hash && entryHash(anchor.prev_hash, anchor, Number(anchor.version ?? 1)) === anchor.hash;
  if (intact) return { anchor, broken: null };
  const what = anchor ? 'no longer matches the hash it had' : 'is gone';
  return { anchor: null, broken: { seq: kept.seq, kind: anchor ? 'edited' : 'deleted', message: `entry ${kept.seq}, verified intact at ${kept.verified_at ?? 'an earlier check'}, ${what}: the trail was altered since; paybatch audit verify names the first break` } };
}

/** Verifies the entries after the checkpoint, counts them, and moves the checkpoint when they are intact. */
export async function extendVerification(store: AuditStore, now: string): Promise<KeptChain> {
  const kept = await store.auditCheckpoint();
  const last = await store.auditHead();
  const { anchor, broken: anchorBroken } = await anchorOf(store, kept);
  const result = (broken: Break | null, verified: { seq: number; at: string | null }, counts: Counts): KeptChain =>
    ({ verified, broken, head: last.seq > 0 ? `${last.seq}:${last.hash}` : null, entries: Number(last.seq), counts });
  if (anchorBroken) return result(anchorBroken, { seq: kept.seq, at: kept.verified_at }, kept.counts);
  const walk = new Walk({ actions: { ...kept.counts.actions }, batches: { ...kept.counts.batches } });
  if (anchor) walk.walker.resumeFrom(anchor);
  await walkPages(store, walk, kept.seq);
  const { broken, counts } = walk;
  if (broken || walk.walker.count === 0) return result(broken, { seq: kept.seq, at: kept.verified_at }, broken ? kept.counts : counts);
  // Intact: the walker's head is the last entry verified.
  const reached = walk.walker.head;
  const next: AuditCheckpoint = { seq: Number(reached.seq), hash: reached.hash, verified_at: now, counts };
  // Another view may have moved it first: its result covers as much, and this one is not written over it.
  await store.moveAuditCheckpoint(kept.seq, next);
  return result(null, { seq: next.seq, at: now }, counts);
}

/**
 * What the full check (`paybatch audit verify`) leaves for the console: the
 * checkpoint at the head it verified, or, when it found a break, back at the
 * start, so that no view trusts a result the break falls inside.
 */
export async function keepFullVerification(store: AuditStore, intact: AuditCheckpoint | null): Promise<void> {
  const kept = await store.auditCheckpoint();
  const next = intact ?? { seq: 0, hash: GENESIS, verified_at: null, counts: { actions: {}, batches: {} } };
  if (intact && intact.seq < kept.seq) return;
  await store.moveAuditCheckpoint(kept.seq, next);
}
