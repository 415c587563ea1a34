/**
 * The steps of a row, the I/O around the pure decision: create, fund, cancel,
 * read. Each step reads the row, asks `decide` what an answer means, and
 * commits the change only if the row has not moved (compare-and-set on its
 * revision; on a conflict the row is read again and the decision made again).
 *
 * Exactly once: before each write the row's intent is recorded (creating,
 * funding), so that after a crash, or when an answer is lost, the outcome is
 * found out before anything is sent again: a create by looking the external_id
 * up [D7], a fund by reading the transaction [D10]. The service itself refuses
 * a second transaction with the same external_id [D6] and a second funding
 * [D10], so even a race cannot pay twice.
 */
import type { ServiceTransaction } from '../api/answers.js';
import type { CallLimits, PayoutClient } from '../api/client.js';
import { AuthenticationRefused, OutcomeUnknown, Rejected, Retryable, fundRefusal } from '../api/errors.js';
import type { Clock } from '../clock.js';
import type { Slot } from './call-slots.js';
import { WHOLE_STEP_SLOT } from './call-slots.js';
import type { PipelineRow, PipelineStore, RowPatch } from '../store/port.js';
import { checkRowAnswer, lookupHit } from './answer-check.js';
import type { Asked, Decision, Policy } from './decide.js';
import { decide, fundingDeadline, hold, withIntentAudits } from './decide.js';
import { afterRefusedCommit, cancelAccepted, claimForCreate, endByPaybatch, fundingCallRefused, refuseUnapproved, refusedByService } from './step-decisions.js';
import { money } from './for-people.js';
import type { Phase, ReasonCode } from '../payout-states.js';
import { REASONS, isAttentionState } from '../payout-states.js';

export interface PipelineLog {
  (event: string, fields: Record<string, unknown>): void;
}

export interface StepDeps {
  store: PipelineStore;
  client: PayoutClient;
  clock: Clock;
  policy: Policy;
  log: PipelineLog;
  /** What bounds every call now: the run's --wait and the stop signal. */
  limits(): CallLimits;
  /** The balance of a currency ran out: the pipeline stops the currency and cancels what waits in it. */
  onBalanceExhausted(currency: string, detail: string): Promise<void>;
  /** A row not signed for was about to be created or funded: the pipeline holds its batch. */
  onUnapprovedRow(batchId: string, reason: string): Promise<void>;
}

const CREATE_ATTEMPTS = 5;
const COMMIT_ATTEMPTS = 8;

const where = (row: PipelineRow): Record<string, unknown> => ({ batch: row.batch_id, line: row.line, external_id: row.external_id });

export class RowSteps {
  constructor(private readonly deps: StepDeps) {}

  /**
   * Applies a decision by compare-and-set, deciding again from the stored row
   * whenever it moved in between. Returns the row as committed and the decision
   * applied, or null when the row is gone.
   */
  private async commit(start: PipelineRow, choose: (row: PipelineRow) => Decision): Promise<{ row: PipelineRow; decision: Decision } | null> {
    const { store } = this.deps;
    let row: PipelineRow | undefined = start;
    for (let attempt = 0; attempt < COMMIT_ATTEMPTS && row; attempt++) {
      let decision = withIntentAudits(row, choose(row), this.deps.clock.now());
      if (!decision.patch) {
        if (decision.schedule) await store.scheduleRead(row.batch_id, row.line, decision.schedule.at, decision.schedule.counted);
        return { row, decision };
      }
      let outcome = await store.commitRow(row.batch_id, row.line, row.revision, decision.patch, row);
      if (outcome.kind !== 'applied' && outcome.kind !== 'moved') {
        decision = afterRefusedCommit(row, decision, outcome, this.deps.clock.now(), this.deps.policy);
        outcome = await store.commitRow(row.batch_id, row.line, row.revision, decision.patch as RowPatch, row);
      }
      if (outcome.kind === 'applied') {
        const { errors: _errors, ...changes } = (decision.patch as RowPatch).changes;
        return { row: { ...row, ...changes, revision: row.revision + 1, reads: row.reads + (decision.patch?.countRead ? 1 : 0) }, decision };
      }
      row = await store.row(row.batch_id, row.line);
    }
    if (row) this.deps.log('row_busy', { ...where(row), reason: 'the row kept moving; it is taken up again later' });
    return null;
  }

  /**
   * What the service said about the row's transaction, decided on and acted upon. Returns what came of it. A call the
   * decision asks for is made holding `slot` (see call-slots.ts).
   */
  async observe(row: PipelineRow, tx: ServiceTransaction, asked: Asked, slot: Slot = WHOLE_STEP_SLOT): Promise<Decision['label']> {
    let before = row;
    const done = await this.commit(row, (now) => {
      before = now;
      return decide(now, { tx, asked }, this.deps.clock.now(), this.deps.policy);
    });
    if (!done) return 'applied';
    await this.act(done.row, done.decision, asked, slot, before);
    return done.decision.label;
  }

  private async act(row: PipelineRow, decision: Decision, asked: Asked, slot: Slot = WHOLE_STEP_SLOT, before?: PipelineRow): Promise<void> {
    const { action } = decision;
    // A row entering a state that needs a person is said, once, with its reason.
    if (before && row.state !== before.state && isAttentionState(row.state)) {
      this.deps.log('row_attention', { ...where(row), state: row.state, reason: [row.state_reason_code, row.state_reason].filter(Boolean).join(': ') });
    }
    if (action.kind === 'hold') {
      this.deps.log('answer_mismatch', { ...where(row), transaction: row.transaction_id, asked_in: asked, detail: action.detail, fields: action.mismatches });
    } else if (action.kind === 'cancel') {
      if (action.outcome === REASONS.approvalInvalid) await this.deps.onUnapprovedRow(row.batch_id, action.detail);
      this.deps.log(action.outcome === REASONS.insufficientFunds || action.outcome === REASONS.fundRefused ? action.outcome : 'limit_refused', { ...where(row), transaction: row.transaction_id, outcome: action.outcome, detail: action.detail });
      await this.sendCancel(row, slot);
    } else if (action.kind === 'cancel_again') {
      // A cancellation decided earlier, still not taken by the service (see decide's cancelAgain).
      const fields = { ...where(row), transaction: row.transaction_id, state: row.state, outcome: row.outcome };
      if (action.given_up) {
        const what = row.cancel_accepted_at
          ? `the service accepted paybatch's cancellation at ${row.cancel_accepted_at} and still holds the transaction as cancellable`
          : `paybatch sent its cancellation ${action.sends} times and the service still holds the transaction as cancellable`;
        this.deps.log('cancel_given_up', { ...fields, sends: action.sends, accepted_at: row.cancel_accepted_at ?? null, reason: `${what}: ask the service to cancel it or to say why not` });
      } else {
        this.deps.log('cancel_sent_again', { ...fields, sends: action.sends });
        await this.sendCancel(row, slot);
      }
    } else if (action.kind === 'fund') {
      await this.fund(row, action.amount, action.currency, slot);
    } else if (decision.label === 'applied' && row.phase === 'final' && decision.patch) {
      // How the final state was learned, and the reads it took, for /metrics.
      this.deps.log('settled', { ...where(row), transaction: row.transaction_id, state: row.state, code: row.state_reason_code, source: decision.patch.learned ?? null, reads: row.reads });
    }
  }

  /**
   * [D6], [D7] Creates the row's transaction once: a create that may have happened is looked up before any new one.
   * Once its funding has answered, the row gives its slot back (see fund).
   */
  async send(start: PipelineRow, slot: Slot = WHOLE_STEP_SLOT): Promise<void> {
    const { client } = this.deps;
    let row = start;
    const resumed = row.phase === 'creating';
    // Claimed for its create: with approvals on, the row as it will be sent must be one signed for (see approval-gate.ts).
    const unapproved = row.phase === 'ready' || resumed ? this.deps.policy.unapprovedRow(row) : null;
    if (unapproved !== null) return this.refuseUnapproved(row, unapproved);
    if (row.phase === 'ready') {
      const now = this.deps.clock.now();
      const claimed = await this.apply(row, (current) => claimForCreate(current, now));
      if (!claimed) return;
      row = claimed;
    }
    if (row.phase !== 'creating') return;
    for (let attempt = 1; ; attempt++) {
      if (attempt > 1 || resumed) {
        if (await this.adoptExisting(row, slot)) return;
      }
      try {
        await this.observe(row, await slot.call(() => client.createTransaction(row.request, this.deps.limits())), 'create', slot);
        return;
      } catch (error) {
        if (error instanceof Rejected) {
          if (error.concerns('external_id') && (await this.adoptExisting(row, slot))) return;
          await this.commit(row, (current) => refusedByService(current, error.reasons, error.message));
          this.deps.log('row_refused_by_service', { ...where(row), reason: error.message });
          return;
        }
        if (!(error instanceof OutcomeUnknown) || attempt >= CREATE_ATTEMPTS || this.deps.limits().signal?.aborted) throw error;
      }
    }
  }

  /**
   * A row not signed for is not sent: ready, it ends not sent; creating (a create may have gone out before a restart),
   * it is held for a person. Either way its batch is held.
   */
  private async refuseUnapproved(row: PipelineRow, reason: string): Promise<void> {
    await this.commit(row, (current) => refuseUnapproved(current, reason));
    this.deps.log('row_not_approved', { ...where(row), reason });
    await this.deps.onUnapprovedRow(row.batch_id, reason);
  }

  /** [D7] Looks the external_id up; adopts the row's own transaction, holds the row when the answer is someone else's. */
  private async adoptExisting(row: PipelineRow, slot: Slot): Promise<boolean> {
    const found = await slot.call(() => this.deps.client.findTransactions(row.external_id, this.deps.limits()));
    const hit = lookupHit({ external_id: row.external_id, request: row.request, transaction_id: null }, found);
    if (hit.mismatches.length > 0) {
      const held = await this.commit(row, (current) => hold(current, 'lookup', hit.mismatches));
      if (held) await this.act(held.row, held.decision, 'lookup', slot);
      return true;
    }
    if (!hit.tx) return false;
    await this.observe(row, hit.tx, 'lookup', slot);
    return true;
  }

  /**
   * [D10] Funds with the amount guard; the intent (funding) and the reservation were committed by the decision. Once
   * the funding has answered, the row's slot goes to the next row: what is left is its commit, and a call the answer
   * still asks for (a cancellation) takes a slot again.
   */
  private async fund(row: PipelineRow, amount: string, currency: string, slot: Slot): Promise<void> {
    const { client } = this.deps;
    const id = row.transaction_id as string;
    // Calls never wait past the funding deadline: after it, the row is not funded.
    const limits = { ...this.deps.limits(), until: Math.min(this.deps.limits().until ?? Infinity, fundingDeadline(row, this.deps.policy, this.deps.clock.now())) };
    let answer: ServiceTransaction;
    try {
      answer = await slot.call(() => client.fundTransaction(id, { input_amount_in_cents: amount, input_currency: currency }, limits));
    } catch (error) {
      // Refused or unanswered, the row keeps its slot: a refusal for lack of balance stops the currency before the next
      // row is created, and what is not known is found out first.
      if (error instanceof Rejected) return this.fundRefused(row, error, amount, currency, slot);
      if (error instanceof OutcomeUnknown || error instanceof Retryable) return this.resolveFunding(row, slot);
      throw error;
    }
    slot.release();
    this.deps.log('funded', { ...where(row), transaction: id, amount, currency });
    await this.observe(row, answer, 'fund', slot);
  }

  private async fundRefused(row: PipelineRow, error: Rejected, amount: string, currency: string, slot: Slot): Promise<void> {
    const kind = fundRefusal(error);
    if (kind === 'balance') {
      const detail = `the service refused funding ${money(amount, currency)} for lack of balance ("${error.reasons}")`;
      const ended = await this.commit(row, (current) => fundingCallRefused(current, REASONS.insufficientFunds, detail, this.deps.clock.now(), this.deps.policy.polling));
      if (ended) await this.act(ended.row, ended.decision, 'fund', slot);
      await this.deps.onBalanceExhausted(currency, `the ${currency} balance ran out (batch ${row.batch_id} line ${row.line}: funding ${money(amount, currency)} refused)`);
      return;
    }
    // The transaction or its quote moved: read it and decide again, a bounded number of times.
    if ((kind === 'state' || kind === 'amount') && row.fund_attempts < this.deps.policy.fundAttempts) return this.resolveFunding(row, slot);
    const detail = `the service refused the funding: ${error.reasons}`;
    const errors = [{ line: row.line, column: 'funding', code: REASONS.fundRefused, message: error.message }];
    const ended = await this.commit(row, (current) => fundingCallRefused(current, REASONS.fundRefused, detail, this.deps.clock.now(), this.deps.policy.polling, { errors }));
    if (ended) await this.act(ended.row, ended.decision, 'fund', slot);
  }

  /** A funding whose outcome is not known: the transaction is read before any new funding. */
  async resolveFunding(row: PipelineRow, slot: Slot = WHOLE_STEP_SLOT): Promise<void> {
    const tx = await slot.call(() => this.deps.client.getTransaction(row.transaction_id as string, this.deps.limits()));
    const now = (await this.deps.store.row(row.batch_id, row.line)) ?? row;
    await this.observe(now, tx, 'resolve', slot);
  }

  /** Reads the transaction (a scheduled read, or a catch-up). */
  async read(row: PipelineRow): Promise<void> {
    const tx = await this.deps.client.getTransaction(row.transaction_id as string, this.deps.limits());
    // Decided on the row as stored once the answer is in, not as it was before the call: a read may wait on the service
    // up to its timeout, and what it decides (funding, the row checked against the rows the approvers signed) must
    // hold for the row as it stands. A row gone meanwhile is left to whatever removed it.
    const now = await this.deps.store.row(row.batch_id, row.line);
    if (now) await this.observe(now, tx, 'read');
  }

  /** [D11] Sends the cancellation whose intent a decision committed; the next read follows it. */
  private async sendCancel(row: PipelineRow, slot: Slot): Promise<void> {
    try {
      const answer = await slot.call(() => this.deps.client.cancelTransaction(row.transaction_id as string, this.deps.limits()));
      const mismatches = checkRowAnswer(row, answer);
      if (mismatches.length > 0) {
        const held = await this.commit(row, (current) => hold(current, 'cancel', mismatches));
        if (held) await this.act(held.row, held.decision, 'cancel', slot);
      } else {
        await this.commit(row, (current) => cancelAccepted(current, this.deps.clock.now()));
      }
    } catch (error) {
      if (error instanceof AuthenticationRefused) throw error;
      // Refused (no longer cancellable: already cancelled or expired), or unanswered: the next read tells.
      if (!(error instanceof Rejected || error instanceof OutcomeUnknown || error instanceof Retryable)) throw error;
    }
  }

  /**
   * Ends a created row with a decision of paybatch's own (a sender rejected, a stopped currency): cancelled, with the
   * reason (see step-decisions.ts, endByPaybatch).
   */
  async end(row: PipelineRow, outcome: ReasonCode, detail: string, phases: readonly Phase[] = ['created'], options: { reasonIfCanceled?: boolean } = {}): Promise<boolean> {
    const ended = await this.commit(row, (current) => endByPaybatch(current, { outcome, detail, phases, ...options }, this.deps.clock.now(), this.deps.policy.polling));
    if (!ended || ended.decision.action.kind !== 'cancel') return false;
    await this.act(ended.row, ended.decision, 'cancel');
    return true;
  }

  /** Applies a decision of `decide.ts` made from the row as stored now; the row as committed, or null when it did not apply. */
  async apply(row: PipelineRow, choose: (current: PipelineRow) => Decision): Promise<PipelineRow | null> {
    const done = await this.commit(row, choose);
    return done && done.decision.patch ? done.row : null;
  }
}
