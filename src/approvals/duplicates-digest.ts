/**
 * The possible duplicates of a batch (engine/duplicates.ts) as approvers sign
 * them: each row found, its twin, what was decided (hold or warn) and who
 * allowed it and why, in line order, hashed into the statement's
 * `duplicates_sha256`. Recomputed whenever an approval is verified, so an
 * allowance made after a signature (by hand in the database: paybatch allow
 * refuses once anyone approved) no longer matches it. Absent (undefined) when
 * the batch has none. Also the lines held without an allowance when signed:
 * the gate never sends those, whatever their phase says later. Pure.
 */
import { createHash } from 'node:crypto';
import type { PossibleDuplicate } from '../store/port.js';

export type SignedDuplicate = Pick<PossibleDuplicate, 'line' | 'action' | 'allowed_by' | 'allowed_reason'> & { twin: Pick<PossibleDuplicate['twin'], 'batch_id' | 'line'> };

/** One line per possible duplicate: `line TAB twin batch TAB twin line TAB action TAB allowed_by TAB allowed_reason` as JSON strings. */
const lineOf = (d: SignedDuplicate): string =>
  `${[d.line, d.twin.batch_id, d.twin.line, d.action, d.allowed_by ?? null, d.allowed_reason ?? null].map((v) => JSON.stringify(v)).join('\t')}\n`;

export function duplicatesDigest(found: readonly SignedDuplicate[]): string | undefined {
  if (found.length === 0) return undefined;
  const digest = createHash('sha256');
  for (const d of [...found].sort((a, b) => a.line - b.line)) digest.update(lineOf(d));
  return digest.digest('hex');
}

/** The lines held as possible duplicates with no allowance: not to be sent under the signatures made over them. */
export function unallowedHolds(found: readonly SignedDuplicate[]): ReadonlySet<number> {
  return new Set(found.filter((d) => d.action === 'hold' && d.allowed_by === null).map((d) => d.line));
}
