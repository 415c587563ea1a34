/**
 * The decisions of the steps around the service's calls (steps.ts applies them), beside the decision on what the
 * service said (decide.ts). Each takes the row as stored now: on a conflict the step reads it again and asks again. A
 * decision that does not apply to the row as it is now is 'stale' and changes nothing. Pure.
 */
import { money } from './for-people.js';
import type { CommitOutcome, PipelineRow, RowAudit, RowChanges } from '../store/port.js';
import type { Mismatch } from './answer-check.js';
import type { Decision, Policy } from './decide.js';
import { cancel, cancelSent, hold, iso, refuseFunding, withIntentAudits } from './decide.js';
import type { PollingPolicy } from './read-schedule.js';
import { firstInterval } from './read-schedule.js';
import type { Phase, ReasonCode } from '../payout-states.js';
import { CANCEL_SENDS, REASONS } from '../payout-states.js';

const stale = (): Decision => ({ patch: null, action: { kind: 'none' }, label: 'stale' });
const applied = (changes: RowChanges, audits?: RowAudit[]): Decision => ({ patch: { changes, ...(audits ? { audits } : {}) }, action: { kind: 'none' }, label: 'applied' });

/** [D7] A ready row claimed for its create: creating, from when paybatch asked (its transaction cannot be older). */
export function claimForCreate(row: PipelineRow, now: number): Decision {
  if (row.phase !== 'ready') return stale();
  return applied({ phase: 'creating', created_at: iso(now) }, [{
    action: 'create_requested', at: iso(now), details: { external_id: row.external_id, amount: row.request.output_amount_in_cents, currency: row.request.output_currency_code },
  }]);
}

/** The service refused the create [7]: the row ends there, with its reasons. */
export function refusedByService(row: PipelineRow, reasons: string, message: string): Decision {
  return applied({ phase: 'final', outcome: REASONS.rejectedByService, outcome_detail: reasons, errors: [{ line: row.line, column: 'external_id', code: REASONS.rejectedByService, message }] });
}

/** A row not signed for: ready, it ends not sent; creating (a create may have gone out before a restart), it is held for a person. */
export function refuseUnapproved(row: PipelineRow, reason: string): Decision {
  if (row.phase === 'ready') return applied({ phase: 'not_sent', outcome: REASONS.approvalInvalid, outcome_detail: reason });
  if (row.phase === 'creating') return { ...applied({ phase: 'held', outcome: REASONS.approvalInvalid, outcome_detail: reason, next_read_at: null }), label: 'held' };
  return stale();
}

/** The service refused a funding paybatch sent: the row, if still being funded, is cancelled with the reason. */
export function fundingCallRefused(row: PipelineRow, outcome: ReasonCode, detail: string, now: number, polling: PollingPolicy, changes: RowChanges = {}): Decision {
  return row.phase === 'funding' ? cancel(outcome, detail, now, polling, changes) : stale();
}

/**
 * A row ended by paybatch's own decision (a sender rejected, a stopped currency): cancelled, if in one of `phases`. With
 * `reasonIfCanceled`, a row the service cancelled meanwhile, unfunded and with no reason recorded, keeps this one.
 */
export function endByPaybatch(row: PipelineRow, end: { outcome: ReasonCode; detail: string; phases: readonly Phase[]; reasonIfCanceled?: boolean }, now: number, polling: PollingPolicy): Decision {
  if ((end.phases as readonly string[]).includes(row.phase)) return cancel(end.outcome, end.detail, now, polling);
  if (end.reasonIfCanceled && row.phase === 'final' && row.state === 'canceled' && row.outcome === null && row.funded_at === null) {
    return applied({ outcome: end.outcome, outcome_detail: end.detail });
  }
  return stale();
}

/** [D11] A person asked to cancel a row in phase `from`: cancelling, with who asked and what it was, read again soon. */
export function cancelOnRequest(row: PipelineRow, from: string, request: { by: string | null; detail: string; state: string }, now: number, polling: PollingPolicy): Decision {
  if (row.phase !== from) return stale();
  return applied({ phase: 'cancelling', outcome: REASONS.cancelledOnRequest, outcome_detail: request.detail, next_read_at: now + firstInterval(polling), ...cancelSent(1, now), cancel_accepted_at: null }, [{
    action: 'cancel_requested', at: iso(now), actor: request.by ?? 'unknown', details: { transaction: row.transaction_id, outcome: REASONS.cancelledOnRequest, state: request.state },
  }]);
}

/**
 * [D11] The service accepted a row's cancellation (answered 202 with the row's own transaction): recorded, so that it
 * is not sent again while the service carries it out. Once: a later 202 keeps the first time. An acceptance come after
 * paybatch gave up sending (a DELETE answered slowly) takes the give-up back: the service has it after all, and is
 * given its own while to carry it out (decide's cancelAgain).
 */
export function cancelAccepted(row: PipelineRow, now: number): Decision {
  if (row.phase !== 'cancelling' || row.cancel_accepted_at) return stale();
  return applied({ cancel_accepted_at: iso(now), ...((row.cancels_sent ?? 0) > CANCEL_SENDS ? { cancels_sent: CANCEL_SENDS } : {}) }, [{
    action: 'cancel_accepted', at: iso(now), details: { transaction: row.transaction_id, outcome: row.outcome },
  }]);
}

/** The service refused the cancellation asked for, or never answered: the row goes back to where it was, with its reason. */
export function cancelOnRequestUndone(row: PipelineRow, before: Pick<PipelineRow, 'phase' | 'outcome' | 'outcome_detail'>): Decision {
  // A cancellation of it the service accepted meanwhile (the engine's, sent again) stands: the row stays cancelling.
  return row.phase === 'cancelling' && !row.cancel_accepted_at ? applied({ phase: before.phase, outcome: before.outcome, outcome_detail: before.outcome_detail }) : stale();
}

/**
 * The store refused a decision's commit: its reservation (over the budget, or the currency stopped), or the
 * transaction id it adopts (another row's). What to store instead: the funding refused, with the limit that
 * refused it and the states learned kept; or the row held for a person.
 */
export function afterRefusedCommit(row: PipelineRow, decision: Decision, refusal: Exclude<CommitOutcome, { kind: 'applied' | 'moved' }>, now: number, policy: Policy): Decision {
  if (refusal.kind === 'taken') {
    const mismatch: Mismatch = { field: 'id', asked: 'a transaction of its own', answered: `${String(decision.patch?.changes.transaction_id)}, the transaction of batch ${refusal.batch_id} line ${refusal.line}` };
    return withIntentAudits(row, hold(row, 'the answer', [mismatch]), now);
  }
  const learned = (decision.patch?.audits ?? []).filter((a) => a.action === 'state_learned');
  if (refusal.kind === 'stopped') return withIntentAudits(row, refuseFunding(decision, REASONS.insufficientFunds, `not funded: ${refusal.detail}`, now, policy), now, learned);
  const reserve = decision.patch?.reserve;
  const currency = reserve?.currency ?? row.request.input_currency_code;
  const amount = reserve?.amount ?? 0n;
  const detail = `input ${money(amount, currency)} would take the batch to ${money(refusal.committed + amount, currency)}, over its budget ${money(reserve?.budget ?? 0n, currency)} (engine.batch_budget, or the ceiling approved)`;
  return withIntentAudits(row, refuseFunding(decision, REASONS.overBudget, detail, now, policy), now, learned);
}
