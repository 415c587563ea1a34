/**
 * Before money moves, the approvals of a batch are verified: every signature
 * against the configured public keys, every statement against the batch as it
 * is now, the number of approvers against the rules. Only then is the batch
 * sent, and its approved ceiling per input currency becomes its budget. The
 * verification runs again at every start for the open batches, so a restart
 * resumes without asking again, while an approval edited in the database, a
 * changed file or a policy that no longer allows it holds the batch. Nothing
 * here trusts the approvals table alone, nor `released`: the approval must be
 * unexpired at the release that this process sealed (see release-seal.ts), or
 * now. Once verified, each row is checked against the rows signed for when it
 * is claimed for its create and for its funding (see signed-rows.ts): a row
 * edited or inserted after approval is not sent, and holds the batch.
 */
import type { ApprovalFacts } from '../approvals/facts.js';
import { approvalFacts } from '../approvals/facts.js';
import { checkDecisionRecords } from './approval-records.js';
import { sealedReleaseTime, sealRelease } from '../approvals/release-seal.js';
import type { Sealed } from '../approvals/release-seal.js';
import type { SignedRows } from '../approvals/signed-rows.js';
import type { Statement } from '../approvals/statement.js';
import { STATEMENT_FORMAT } from '../approvals/statement.js';
import type { ApprovalPolicy, KeptApproval } from '../approvals/verify.js';
import { verifyApprovals } from '../approvals/verify.js';
import type { Clock } from '../clock.js';
import { REASONS } from '../payout-states.js';
import type { ReasonCode } from '../payout-states.js';
import type { PayoutRequest } from '../api/payout-request.js';
import type { ApprovalStore, BatchRecord, DuplicateStore, PipelineStore, ReleaseSeal } from '../store/port.js';
import type { PipelineLog } from './steps.js';

export type GateVerdict =
  | { kind: 'not_needed' }
  | { kind: 'approved'; approvers: string[] }
  | { kind: 'waiting'; reason: string }
  | { kind: 'ended'; outcome: ReasonCode; reason: string };

/** What funding a row may do under the approvals: a budget (minor units), none set (null), or nothing at all (held). */
export type Allowance = bigint | null | 'held';

/** The purpose of the key the release seal is made with (PayoutClient.derivedKey). */
export const RELEASE_SEAL = 'release seal';

export class ApprovalGate {
  private readonly ceilings = new Map<string, Map<string, bigint>>();
  /** Per batch verified in this process: its rows as signed for, and what its release seal covers. */
  private readonly approved = new Map<string, { rows: SignedRows; sealed: Sealed; unallowedHolds: ReadonlySet<number> }>();
  private readonly held = new Map<string, string>();
  private readonly free = new Set<string>();
  private deployment: string | null = null;

  /** `sealKey`: derived from the service's secret (PayoutClient.derivedKey); without it no release is sealed or believed. */
  constructor(
    private readonly policy: ApprovalPolicy | undefined,
    private readonly store: ApprovalStore & Pick<DuplicateStore, 'possibleDuplicates'>,
    private readonly clock: Clock,
    private readonly rates: Readonly<Record<string, string>> = {},
    private readonly sealKey?: Buffer,
  ) {}

  get enabled(): boolean {
    return this.policy !== undefined;
  }

  async facts(batch: Pick<BatchRecord, 'id' | 'sha256'>): Promise<ApprovalFacts> {
    this.deployment ??= await this.store.deploymentId();
    // The possible duplicates and their allowances are part of what is signed (approvals/duplicates-digest.ts).
    return approvalFacts(batch, this.store.acceptedRows(batch.id), this.rates, this.deployment, await this.store.possibleDuplicates(batch.id));
  }

  /**
   * Verifies a batch's approvals, their expiry against the time its release was sealed, or else now: `released` set
   * by hand releases nothing.
   */
  async check(batch: BatchRecord): Promise<GateVerdict> {
    if (!this.policy) {
      if (batch.approval === null) {
        this.free.add(batch.id);
        return { kind: 'not_needed' };
      }
      return this.hold(batch, 'approvals were required for this batch and are now off in the configuration: it is held for a person');
    }
    // A hold is for a person: once held (a row edited after approval, a key changed), a later verification that passes
    // again (the row put back) does not let the batch go, nor write over the reason it was held for.
    if (batch.approval === 'held') return this.hold(batch, batch.approval_reason ?? 'held for a person');
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
    const older = approvals.find((a) => typeof (a.statement as Partial<Statement> | null)?.deployment !== 'string');
    if (older) return this.hold(batch, `the approval by ${older.approver} is of an earlier format (paybatch approval v1, naming no deployment) and no longer verifies (${STATEMENT_FORMAT} now): submit the file again and have it approved anew`);
    const facts = await this.facts(batch);
    const first = approvals[0]?.statement;
    const sealed: Sealed = { deployment: facts.expected.deployment, batch: batch.id, rows_sha256: facts.expected.rows_sha256, expires_at: first?.expires_at ?? '' };
    const releasedAt = first ? sealedReleaseTime(this.sealKey, sealed, batch) : null;
    const verdict = verifyApprovals(this.policy, facts.expected, facts.figures, approvals, batch.submitted_by ?? this.policy.inboxSubmitter, releasedAt ?? this.clock.now());
    if (verdict.ok) {
      this.ceilings.set(batch.id, new Map(Object.entries(verdict.ceiling).map(([currency, minor]) => [currency, BigInt(minor)])));
      this.approved.set(batch.id, { rows: facts.rows, sealed, unallowedHolds: facts.unallowedHolds });
      if (batch.approval !== 'approved') await this.store.setApprovalState(batch.id, 'approved', `by ${verdict.approvers.join(', ')}`);
      return { kind: 'approved', approvers: verdict.approvers };
    }
    if (verdict.waiting && batch.released === 1) return this.hold(batch, `marked released without the approvals it needs (${verdict.reason}): set by hand, or approvals were turned on while it was open`);
    if (verdict.waiting) {
      const expiresAt = Date.parse(batch.approval_expires_at ?? batch.received_at) + (batch.approval_expires_at ? 0 : this.policy.expiresAfterMs);
      if (this.clock.now() >= expiresAt) return this.end(batch, REASONS.approvalExpired, `not approved by ${batch.approval_expires_at} (${verdict.reason})`);
      return { kind: 'waiting', reason: `awaiting approval: ${verdict.reason}` };
    }
    return this.hold(batch, verdict.reason);
  }

  private async end(batch: BatchRecord, outcome: ReasonCode, reason: string): Promise<GateVerdict> {
    await this.store.setApprovalState(batch.id, outcome === REASONS.approvalRejected ? 'rejected' : 'expired', reason);
    this.held.set(batch.id, reason);
    this.approved.delete(batch.id);
    return { kind: 'ended', outcome, reason };
  }

  private async hold(batch: BatchRecord, reason: string): Promise<GateVerdict> {
    await this.store.setApprovalState(batch.id, 'held', reason);
    this.held.set(batch.id, reason);
    this.approved.delete(batch.id);
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

  /** The seal of a release now, for a batch verified in this process and unexpired now; undefined without a key. */
  seal(batchId: string): ReleaseSeal | undefined {
    const approved = this.approved.get(batchId);
    const now = this.clock.now();
    if (!this.sealKey || !approved || now >= Date.parse(approved.sealed.expires_at)) return undefined;
    return sealRelease(this.sealKey, approved.sealed, now);
  }

  /**
   * Why this row may not be created or funded now, or null: with approvals on, only a row of a batch verified in this
   * process, with exactly the line and request signed for (recomputed from the row as it is about to be sent).
   */
  unapprovedRow(row: { batch_id: string; line: number; external_id: string; request: PayoutRequest }): string | null {
    const held = this.held.get(row.batch_id);
    if (held !== undefined) return held;
    if (!this.policy || this.free.has(row.batch_id)) return null;
    const approved = this.approved.get(row.batch_id);
    if (!approved) return `the approvals of batch ${row.batch_id} were not verified before its line ${row.line} was sent`;
    if (!approved.rows.covers(row.line, row.request)) {
      return `line ${row.line} (${row.external_id}) is not a row the approvers signed for: edited or inserted in the database after approval`;
    }
    if (approved.unallowedHolds.has(row.line)) {
      return `line ${row.line} (${row.external_id}) was held as a possible duplicate, not allowed, when the approvers signed: released after approval without a new signature`;
    }
    return null;
  }

  /** Whether the batch's approvals verified in this process (and it is not held since). */
  verified(batchId: string): boolean {
    return this.approved.has(batchId) || this.free.has(batchId);
  }

  /**
   * A row not signed for was about to be created or funded: the batch is held, and its rows not sent end. Only a batch
   * verified in this process, once (one never verified here has its rows refused all the same).
   */
  async holdForRow(batchId: string, reason: string, deps: { store: Pick<PipelineStore, 'endReadyRows'>; log: PipelineLog }): Promise<void> {
    if (this.held.has(batchId) || !this.approved.has(batchId)) return;
    this.held.set(batchId, reason);
    this.approved.delete(batchId);
    await this.store.setApprovalState(batchId, 'held', reason);
    const notSent = await deps.store.endReadyRows(batchId, REASONS.approvalInvalid, reason);
    deps.log('approval_held', { batch: batchId, reason, not_sent: notSent });
  }

  /** Why the batch is held, if it is. */
  heldReason(batchId: string): string | null {
    return this.held.get(batchId) ?? null;
  }
}
