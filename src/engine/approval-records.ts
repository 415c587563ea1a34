/**
 * The approvals table is not trusted alone: each approval and rejection kept
 * for a batch must match its entry in the audit trail, written by `paybatch
 * approve`/`reject` (or the console) with who, and, for an approval, the
 * fingerprint of the public key its signature verified against.
 *
 * - A person's key that changed since they approved (a key file whose
 *   contents were swapped) holds the batch, naming the person and both
 *   fingerprints: the signature must verify against the key recorded then.
 * - An approval with no entry holds the batch (when its signature verifies:
 *   one that does not is named as such by the verification that follows).
 * - A rejection counts only when its person may approve under the policy and
 *   its entry (same person, same reason) is on the trail; one that does not is
 *   tampering with the database, and holds the batch for a person rather than
 *   ending it: neither the rejection nor the approvals of such a batch are
 *   acted on. Rejections are not signed: a rejection can only stop money, and
 *   an approver must be able to stop a batch from the console without a key.
 *
 * Approvals recorded before fingerprints were (audit entries of version 1
 * without one) are verified as they were: by their signature alone.
 */
import { keyFingerprint, signatureValid } from '../approvals/keys.js';
import { statementBytes } from '../approvals/statement.js';
import type { Statement } from '../approvals/statement.js';
import type { ApprovalPolicy } from '../approvals/verify.js';
import { canApprove } from '../approvals/verify.js';
import type { AuditEntry } from '../audit/chain.js';
import { entryHash } from '../audit/chain.js';
import type { ApprovalRecord, ApprovalStore } from '../store/port.js';

export type DecisionCheck =
  | { kind: 'rejected'; rejection: ApprovalRecord }
  | { kind: 'hold'; reason: string }
  | { kind: 'ok' };

interface Recorded {
  entry: AuditEntry;
  details: Record<string, unknown>;
}

/** The trail's entries of the batch whose own hash holds (an entry edited in place is not a record of anything). */
function recordedEntries(entries: readonly AuditEntry[]): Recorded[] {
  const recorded: Recorded[] = [];
  for (const entry of entries) {
    if (entryHash(entry.prev_hash, entry, Number(entry.version ?? 1)) !== entry.hash) continue;
    try {
      const details = JSON.parse(entry.details) as unknown;
      if (details !== null && typeof details === 'object') recorded.push({ entry, details: details as Record<string, unknown> });
    } catch {
      // Not JSON: not an entry paybatch wrote.
    }
  }
  return recorded;
}

/** Why a rejection kept for the batch does not count, or null when it does. */
function rejectionProblem(policy: ApprovalPolicy, rejection: ApprovalRecord, recorded: readonly Recorded[]): string | null {
  if (!canApprove(policy.people.get(rejection.person), '')) return `${rejection.person} is not an approver or an admin of the approval policy`;
  const entry = recorded.some((r) => r.entry.action === 'rejected' && r.entry.actor === rejection.person && r.details.reason === rejection.reason);
  return entry ? null : 'it has no entry in the audit trail';
}

/** Why an approval kept for the batch is not the one recorded with its key, or null when it is (or is left to the signature check). */
function approvalProblem(policy: ApprovalPolicy, approval: ApprovalRecord, recorded: readonly Recorded[]): string | null {
  const person = policy.people.get(approval.person);
  // Not a person of the policy: the verification names it.
  if (!person) return null;
  const entry = recorded.find((r) => r.entry.action === 'approved' && r.entry.actor === approval.person && r.details.signature === approval.signature);
  const now = keyFingerprint(person.publicKey);
  if (!entry) {
    let signed = false;
    try {
      signed = signatureValid(person.publicKey, statementBytes(JSON.parse(approval.statement ?? 'null') as Statement), approval.signature ?? '');
    } catch {
      // Unreadable: the gate says so.
    }
    return signed ? `the approval by ${approval.person} has no entry in the audit trail (kept other than by paybatch approve): held for a person` : null;
  }
  const then = entry.details.key_fingerprint;
  if (typeof then === 'string') {
    return then === now ? null : `${approval.person}'s public key changed since ${approval.person} approved: approved with the key ${then}, the key configured now is ${now}; held for a person (a key is replaced only once no open batch rests on its approvals)`;
  }
  // Written before fingerprints were kept: its signature alone, as then.
  return Number(entry.entry.version) === 1 ? null : `the approval by ${approval.person} was recorded without its key's fingerprint (audit entry ${entry.entry.seq} edited?): held for a person`;
}

/**
 * The batch's approvals and rejections against their audit entries: a
 * rejection on record ends the batch; a record that does not match holds it;
 * otherwise the approvals go on to be verified (signatures, statements, rules).
 */
export async function checkDecisionRecords(policy: ApprovalPolicy, store: Pick<ApprovalStore, 'decisionEntries'>, batchId: string, kept: readonly ApprovalRecord[]): Promise<DecisionCheck> {
  if (kept.length === 0) return { kind: 'ok' };
  const recorded = recordedEntries(await store.decisionEntries(batchId));
  const rejections = kept.filter((k) => k.decision === 'reject');
  const counted = rejections.find((r) => rejectionProblem(policy, r, recorded) === null);
  if (counted) return { kind: 'rejected', rejection: counted };
  const uncounted = rejections[0];
  if (uncounted) {
    return { kind: 'hold', reason: `a rejection by ${uncounted.person} does not count (${rejectionProblem(policy, uncounted, recorded)}): kept other than by paybatch reject, so the batch is held for a person` };
  }
  for (const approval of kept) {
    const problem = approvalProblem(policy, approval, recorded);
    if (problem) return { kind: 'hold', reason: problem };
  }
  return { kind: 'ok' };
}
