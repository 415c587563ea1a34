/**
 * Before money moves, the approvals of a batch are verified: every signature
 * against the configured public keys, every statement against the batch as it
 * is now, the number of approvers against the rules. Only then is the batch
 * sent, and its approved ceiling per input currency becomes its budget. The
 * verification runs again at every start for the open batches, so a restart
 * resumes without asking again, while an approval edited in the database, a
 * changed file or a policy that no longer allows it holds the batch. Nothing
 * here trusts the approvals table alone.
 */
import type { ApprovalFacts } from '../approvals/facts.js';
import { approvalFacts } from '../approvals/facts.js';
import { checkDecisionRecords } from './approval-records.js';
import type { Statement } from '../approvals/statement.js';
import type { ApprovalPolicy, KeptApproval } from '../approvals/verify.js';
import { verifyApprovals } from '../approvals/verify.js';
import type { Clock } from '../clock.js';
import { REASONS } from '../payout-states.js';
import type { ApprovalStore, BatchRecord } from '../store/store.js';

export type GateVerdict =
  | { kind: 'not_needed' }
  | { kind: 'approved'; approvers: string[] }
  | { kind: 'waiting'; reason: string }
  | { kind: 'ended'; outcome: string; reason: string };

/** What funding a row may do under the approvals: a budget (minor units), none set (null), or nothing at all (held). */
export type Allowance = bigint | null | 'held';

export class ApprovalGate {
  private readonly ceilings = new Map<string, Map<string, bigint>>();
  private readonly held = new Map<string, string>();
  private readonly free = new Set<string>();

  constructor(
    private readonly policy: ApprovalPolicy | undefined,
    private readonly store: ApprovalStore,
    private readonly clock: Clock,
    private readonly rates: Readonly<Record<string, string>> = {},
  ) {}

  get enabled(): boolean {
    return this.policy !== undefined;
  }

  async facts(batch: Pick<BatchRecord, 'id' | 'sha256'>): Promise<ApprovalFacts> {
    return approvalFacts(batch, this.store.acceptedRows(batch.id), this.rates);
  }

  /** Verifies a batch's approvals now; `released` batches are past their request's expiry by design. */
  async check(batch: BatchRecord): Promise<GateVerdict> {
    if (!this.policy) {
      if (batch.approval === null) {
        this.free.add(batch.id);
        return { kind: 'not_needed' };
      }
      return this.hold(batch, 'approvals were required for this batch and are now off in the configuration: it is held for a person');
    }
    // With approvals on, every batch needs them, whatever its row in the database says (a cleared column releases nothing).
    const kept = await this.store.approvalsOf(batch.id);
    // Each approval and rejection must match its audit entry (and key): a rejection counts only then.
    const records = await checkDecisionRecords(this.policy, this.store, batch.id, kept);
    if (records.kind === 'rejected') return this.end(batch, REASONS.approvalRejected, `rejected by ${records.rejection.person}: ${records.rejection.reason ?? 'no reason given'}`);
    if (records.kind === 'hold') return this.hold(batch, records.reason);
    const approvals: KeptApproval[] = [];
    for (const record of kept) {
      try {
        approvals.push({ approver: record.person, statement: JSON.parse(record.statement ?? 'null') as Statement, signature: record.signature ?? '' });
      } catch {
        return this.hold(batch, `the approval by ${record.person} cannot be read`);
      }
    }
    const facts = await this.facts(batch);
    const released = batch.released === 1;
    const verdict = verifyApprovals(this.policy, facts.expected, facts.figures, approvals, batch.submitted_by ?? this.policy.inboxSubmitter, released ? null : this.clock.now());
    if (verdict.ok) {
      this.ceilings.set(batch.id, new Map(Object.entries(verdict.ceiling).map(([currency, minor]) => [currency, BigInt(minor)])));
      if (batch.approval !== 'approved') await this.store.setApprovalState(batch.id, 'approved', `by ${verdict.approvers.join(', ')}`);
      return { kind: 'approved', approvers: verdict.approvers };
    }
    if (verdict.waiting && released) return this.hold(batch, `sent without the approvals it now needs (${verdict.reason}): approvals were turned on while it was open`);
    if (verdict.waiting) {
      const expiresAt = Date.parse(batch.approval_expires_at ?? batch.received_at) + (batch.approval_expires_at ? 0 : this.policy.expiresAfterMs);
      if (!released && this.clock.now() >= expiresAt) return this.end(batch, REASONS.approvalExpired, `not approved by ${batch.approval_expires_at} (${verdict.reason})`);
      return { kind: 'waiting', reason: `awaiting approval: ${verdict.reason}` };
    }
    return this.hold(batch, verdict.reason);
  }

  private async end(batch: BatchRecord, outcome: string, reason: string): Promise<GateVerdict> {
    await this.store.setApprovalState(batch.id, outcome === REASONS.approvalRejected ? 'rejected' : 'expired', reason);
    this.held.set(batch.id, reason);
    return { kind: 'ended', outcome, reason };
  }

  private async hold(batch: BatchRecord, reason: string): Promise<GateVerdict> {
    await this.store.setApprovalState(batch.id, 'held', reason);
    this.held.set(batch.id, reason);
    return { kind: 'ended', outcome: REASONS.approvalInvalid, reason };
  }

  /**
   * What funding a row of the batch may do: the approved ceiling in its input
   * currency (nothing of a currency not approved), the smaller of it and the
   * configured budget; held when the approvals do not verify or were never
   * verified in this process (it fails closed).
   */
  allowance(batchId: string, currency: string, configured: bigint | null): Allowance {
    if (this.held.has(batchId)) return 'held';
    if (!this.policy || this.free.has(batchId)) return configured;
    const ceiling = this.ceilings.get(batchId);
    if (!ceiling) return 'held';
    const approved = ceiling.get(currency) ?? 0n;
    return configured === null || approved < configured ? approved : configured;
  }

  /** Why the batch is held, if it is. */
  heldReason(batchId: string): string | null {
    return this.held.get(batchId) ?? null;
  }
}
