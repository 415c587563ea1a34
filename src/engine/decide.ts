/**
 * The pure decision at the heart of the pipeline (STYLE 13): from the row as
 * stored, what the service just said, the time and the policy, what to store and
 * what to do next. The store applies the change only if the row has not moved
 * since it was read (compare-and-set on its revision); the step then does the
 * action (fund, cancel) whose intent the change recorded.
 *
 * Rules: an answer that is not the row's own is never acted on (the row is held
 * for a person); an observation older than the stored one changes neither state
 * nor phase; a final state never moves back; only the step that owns a funding
 * intent decides that it did not happen.
 */
import type { ServiceTransaction } from '../api/answers.js';
import type { Issue } from '../validate/issue.js';
import { duration, money } from './for-people.js';
import type { ObservationSource, PipelineRow, RowAudit, RowChanges, RowPatch } from '../store/port.js';
import type { Mismatch } from './answer-check.js';
import { checkAnswer, describeMismatches } from './answer-check.js';
import type { PollingPolicy } from './read-schedule.js';
import { firstInterval, nextReadAt } from './read-schedule.js';
import type { ReasonCode } from '../payout-states.js';
import { CANCEL_SENDS, REASONS, SERVICE_CANCELLABLE_STATES, UNFUNDED_AT_SERVICE_PHASES, isFinal, isFinalState, isFundedState, isInFlight, isNewer, isTxState, isWaitingForSender, trustedUpdatedAt } from '../payout-states.js';

export { MAX_CLOCK_SKEW_MS } from '../payout-states.js';

export interface Policy {
  /** Per input currency, minor units: the most one row may cost [4]. */
  maxInputPerRow: Readonly<Record<string, string>>;
  /**
   * The most a batch may cost in an input currency (minor units), null for no
   * limit, or 'held' when it may not be funded at all: the configured budget,
   * and with approvals on, the approved ceiling (see approval-gate.ts).
   */
  allowance(batchId: string, currency: string): bigint | null | 'held';
  /**
   * With approvals on: why this row, as stored now, may not be created or funded (its line and request are not among
   * those signed for), or null when it may (see approval-gate.ts).
   */
  unapprovedRow(row: PipelineRow): string | null;
  fundingDeadlineMs: number;
  polling: PollingPolicy;
  /** Funding calls in a row while each outcome is unknown; then the next scheduled read tries again. */
  fundAttempts: number;
}

/** What was asked when the service said this: it decides which checks apply, and how the change was learned. */
export type Asked = 'create' | 'lookup' | 'read' | 'resolve' | 'fund' | 'cancel' | 'webhook';

export interface Seen {
  tx: ServiceTransaction;
  asked: Asked;
}

export type Action =
  | { kind: 'none' }
  | { kind: 'fund'; amount: string; currency: string }
  | { kind: 'cancel'; outcome: ReasonCode; detail: string }
  /** The cancellation decided earlier, sent again (the `sends`th); or, given up, not sent (`sends` is the count sent). */
  | { kind: 'cancel_again'; sends: number; given_up: boolean }
  | { kind: 'hold'; detail: string; mismatches: readonly Mismatch[] };

export interface Decision {
  /** What to store, by compare-and-set; null when nothing changes. */
  patch: RowPatch | null;
  /** A read that changed nothing still sets the next one (outside the compare-and-set: it moves nothing). */
  schedule?: { at: number; counted: boolean };
  action: Action;
  /** What came of the observation, for the log and a webhook event's outcome. */
  label: 'applied' | 'stale' | 'after_final' | 'held' | 'not_created_yet' | 'not_in_flight' | 'mismatch';
}

const SOURCE: Readonly<Record<Asked, ObservationSource>> = {
  create: 'answer', fund: 'answer', cancel: 'answer', lookup: 'polling', read: 'polling', resolve: 'polling', webhook: 'webhook',
};
const WHAT: Readonly<Record<Asked, string>> = {
  create: 'the create answer', lookup: 'the lookup by external_id', read: 'a read', resolve: 'a read', fund: 'the fund answer', cancel: 'the cancel answer', webhook: 'a webhook',
};

export const iso = (ms: number): string => new Date(ms).toISOString();
const none = (label: Decision['label']): Decision => ({ patch: null, action: { kind: 'none' }, label });

/**
 * The row held for a person: the answer did not match what was asked. Nothing
 * more is sent for it. A 200 to paybatch's own funding call still says its
 * transaction was funded [D10]: that is kept, so the debit counts.
 */
export function hold(row: PipelineRow, asked: Asked | string, mismatches: readonly Mismatch[], now?: number): Decision {
  // A final row stays final: an answer that does not match, come after the end (a cancel's, a lookup's), moves nothing.
  if (row.phase === 'final') return none('after_final');
  const detail = describeMismatches(typeof asked === 'string' && asked in WHAT ? WHAT[asked as Asked] : asked, mismatches);
  const errors: (Issue & Mismatch)[] = mismatches.map((m) => ({
    line: row.line, column: m.field, code: REASONS.answerMismatch, message: `asked ${m.asked}, answered ${m.answered}`, ...m,
  }));
  return {
    patch: { changes: {
      phase: 'held', outcome: REASONS.answerMismatch, outcome_detail: detail, errors, next_read_at: null,
      ...(asked === 'fund' && row.phase === 'funding' && row.funded_at === null && now !== undefined ? { funded_at: iso(now) } : {}),
    } },
    action: { kind: 'hold', detail, mismatches },
    label: 'mismatch',
  };
}

/** Ends a created row that will not be funded: its transaction is cancelled [D11], with the reason in words. */
export function cancel(outcome: ReasonCode, detail: string, now: number, polling: PollingPolicy, changes: RowChanges = {}): Decision {
  return {
    patch: { changes: { ...changes, phase: 'cancelling', outcome, outcome_detail: detail, next_read_at: now + firstInterval(polling), ...cancelSent(1, now), cancel_accepted_at: null } },
    action: { kind: 'cancel', outcome, detail },
    label: 'applied',
  };
}

/** The count of cancellations sent since the row entered cancelling, and the time of the last one. */
export const cancelSent = (sends: number, now: number): RowChanges => ({ cancels_sent: sends, cancel_sent_at: iso(now) });

/**
 * [D11] A row still cancelling while the service holds its transaction in a state it may be cancelled in (and does not
 * say may_cancel false): the DELETE may never have reached the service (unanswered, or paybatch stopped between
 * committing the intent and sending it), and nothing else would send it. It is sent again, no sooner than one first
 * polling interval after the last, CANCEL_SENDS times in all; then given up once (the count goes one past, which is
 * how a person is shown it), said in the log and the audit trail, and the row is still followed. A second DELETE is
 * harmless: answered 202 or 422 [D11]. A cancellation the service accepted (cancel_accepted_at) is not sent again:
 * it proceeds asynchronously [D11]; but still cancellable CANCEL_SENDS intervals after the acceptance, it is given up
 * the same way (not sent), for a person to ask the service why it was not carried out.
 *
 * A missing may_cancel counts as allowed here, unlike a person's request (cancel-on-request.ts), which is refused
 * unless the service says true: this cancellation is already decided and a refused DELETE costs nothing, while a row
 * never sent again nor given up would stay cancelling with no one told.
 */
function cancelAgain(row: PipelineRow, state: string | null, mayCancel: unknown, now: number, polling: PollingPolicy, patch: RowPatch): Decision {
  const sent = row.cancels_sent ?? 0;
  const cancellable = (SERVICE_CANCELLABLE_STATES as readonly string[]).includes(state ?? '') && mayCancel !== false && sent <= CANCEL_SENDS;
  if (cancellable && row.cancel_accepted_at) {
    // Accepted: never sent again; given up once it has had CANCEL_SENDS intervals to be carried out.
    if (now < Date.parse(row.cancel_accepted_at) + CANCEL_SENDS * firstInterval(polling)) return { patch, action: { kind: 'none' }, label: 'applied' };
    return { patch: { ...patch, changes: { ...patch.changes, cancels_sent: CANCEL_SENDS + 1 } }, action: { kind: 'cancel_again', sends: sent, given_up: true }, label: 'applied' };
  }
  const due = cancellable && !row.cancel_accepted_at && !(row.cancel_sent_at && now < Date.parse(row.cancel_sent_at) + firstInterval(polling));
  if (!due) return { patch, action: { kind: 'none' }, label: 'applied' };
  if (sent >= CANCEL_SENDS) {
    return { patch: { ...patch, changes: { ...patch.changes, cancels_sent: sent + 1 } }, action: { kind: 'cancel_again', sends: sent, given_up: true }, label: 'applied' };
  }
  return { patch: { ...patch, changes: { ...patch.changes, ...cancelSent(sent + 1, now) } }, action: { kind: 'cancel_again', sends: sent + 1, given_up: false }, label: 'applied' };
}

/** The service's state and amounts, as a row stores them. */
function observed(row: PipelineRow, tx: ServiceTransaction, now: string, at: string | null): RowChanges {
  const moved = at ?? now;
  return {
    transaction_id: tx.id,
    state: tx.state,
    state_reason: tx.state_reason,
    state_reason_code: tx.state_reason_code,
    input_amount: tx.input_amount_in_cents ?? row.input_amount,
    input_currency: tx.input_currency ?? row.input_currency,
    output_amount: tx.output_amount_in_cents ?? row.output_amount,
    output_currency: tx.output_currency ?? row.output_currency,
    observed_at: at ?? row.observed_at,
    // As the service said it, with the state it said it with (newer observations only): absent is not said, not a no.
    may_cancel: typeof tx.raw.may_cancel === 'boolean' ? tx.raw.may_cancel : null,
    heard_at: now,
    paid_at: tx.state === 'paid' ? (row.paid_at ?? moved) : row.paid_at,
    refunded_at: tx.state === 'refunded' ? (row.refunded_at ?? moved) : row.refunded_at,
    refunded_amount: tx.state === 'refunded' ? (tx.refunded_amount_in_cents ?? row.refunded_amount ?? tx.input_amount_in_cents ?? row.input_amount) : row.refunded_amount,
    settled_at: isFinalState(tx.state) ? (row.settled_at ?? now) : row.settled_at,
  };
}

/** An ISO 8601 instant with its time zone [D8] (or RFC 3339's space for the T): a looser date (`"Jan 1"`, `"2026"`) is not believed. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * When a row's transaction was created, as far as paybatch can tell. A create's
 * answer: now, the call made it (a row taken up long after it was claimed is
 * created only then). Found by a lookup (after a crash, or an answer lost), it
 * may be older than this moment: its funding deadline counts from when the
 * service says it created it, never before paybatch first asked for it (the
 * claim's time, stored as created_at: a lie cannot age a row further, nor put
 * it in a day already reported) and never after now (a clock ahead of ours
 * would put the deadline off). A date it cannot read counts as now.
 */
function adoptedCreatedAt(row: PipelineRow, tx: ServiceTransaction, asked: Asked, now: number): string {
  const said = tx.raw.created_at;
  const at = asked === 'lookup' && typeof said === 'string' && ISO_INSTANT.test(said) ? Date.parse(said) : Number.NaN;
  if (Number.isNaN(at)) return iso(now);
  return iso(Math.min(Math.max(at, row.created_at === null ? -Infinity : Date.parse(row.created_at)), now));
}

export function fundingDeadline(row: PipelineRow, policy: Policy, now: number): number {
  return (row.created_at ? Date.parse(row.created_at) : now) + policy.fundingDeadlineMs;
}

/** [4] A created, approved transaction: funded if its quote passes the guard and its deadline has not passed. */
function fundOrEnd(row: PipelineRow, tx: ServiceTransaction, changes: RowChanges, now: number, policy: Policy): Decision {
  const currency = row.request.input_currency_code;
  const input = tx.input_amount_in_cents ?? row.input_amount;
  const limit = policy.maxInputPerRow[currency];
  if (input === null) return cancel(REASONS.quoteRejected, 'the service gave no input amount to check', now, policy.polling, changes);
  if (limit !== undefined && BigInt(input) > BigInt(limit)) {
    return cancel(REASONS.quoteRejected, `input ${money(input, currency)} is over engine.max_input_per_row ${money(limit, currency)}`, now, policy.polling, changes);
  }
  const deadline = fundingDeadline(row, policy, now);
  if (now >= deadline) {
    return cancel(REASONS.fundingDeadline, `not funded within engine.funding_deadline_ms ${duration(policy.fundingDeadlineMs)} of creation (created ${row.created_at ?? changes.created_at ?? '?'}, deadline ${iso(deadline)})`, now, policy.polling, changes);
  }
  const budget = policy.allowance(row.batch_id, currency);
  if (budget === 'held') return cancel(REASONS.approvalInvalid, 'not funded: the batch\'s approval does not verify (see paybatch status)', now, policy.polling, changes);
  // Claimed for its funding: the row must still be one the approvers signed for, whatever was changed since its create.
  const unapproved = policy.unapprovedRow(row);
  if (unapproved !== null) return cancel(REASONS.approvalInvalid, `not funded: ${unapproved}`, now, policy.polling, changes);
  return {
    patch: {
      // The amount funded and reserved is the one stored: the budget adds up the rows' amounts, and the funding's answer
      // is checked against it (an observation the same as the stored one but for a new quote kept the old amount).
      changes: { ...changes, phase: 'funding', input_amount: input, input_currency: currency, fund_attempts: row.fund_attempts + 1, next_read_at: null },
      reserve: { currency, amount: BigInt(input), budget },
    },
    action: { kind: 'fund', amount: input, currency },
    label: 'applied',
  };
}

/** The reservation for funding was refused: the row is cancelled instead, with the limit that refused it. */
export function refuseFunding(decision: Decision, outcome: ReasonCode, detail: string, now: number, policy: Policy): Decision {
  const { phase: _phase, fund_attempts: _attempts, next_read_at: _next, ...changes } = decision.patch?.changes ?? {};
  return counting(cancel(outcome, detail, now, policy.polling, changes), decision.patch?.learned, decision.patch?.countRead);
}

/** The decision's patch counted as the observation's: where the state was learned, and whether a read of the polling budget saw it. */
function counting(decision: Decision, learned: RowPatch['learned'], countRead: boolean | undefined): Decision {
  if (!decision.patch) return decision;
  return { ...decision, patch: { ...decision.patch, ...(learned ? { learned } : {}), ...(countRead ? { countRead } : {}) } };
}

/**
 * The decision, with what it records for the audit trail: the state learned
 * (when it changed), and the intents of the calls it commits (fund, cancel) and
 * a hold, in the same transaction as the change.
 */
export function decide(row: PipelineRow, seen: Seen, now: number, policy: Policy): Decision {
  const decision = decideChange(row, seen, now, policy);
  if (!decision.patch) return decision;
  const at = iso(now);
  const audits: RowAudit[] = [];
  const { changes } = decision.patch;
  if (row.phase === 'held' && changes.funded_at !== undefined) {
    audits.push({ action: 'fund_answered_after_hold', at, details: { transaction: row.transaction_id, amount: row.input_amount, currency: row.input_currency } });
  }
  if (changes.state !== undefined && changes.state !== row.state) {
    audits.push({ action: 'state_learned', at, details: { transaction: changes.transaction_id ?? row.transaction_id, state: changes.state, code: changes.state_reason_code ?? null, from: SOURCE[seen.asked] } });
  }
  audits.push(...intentAudits(row, decision, at));
  return audits.length > 0 ? { ...decision, patch: { ...decision.patch, audits } } : decision;
}

/** What a decision's action records: the intent of a call, or a hold. */
export function intentAudits(row: PipelineRow, decision: Decision, at: string): RowAudit[] {
  const { action } = decision;
  const transaction = decision.patch?.changes.transaction_id ?? row.transaction_id;
  if (action.kind === 'fund') return [{ action: 'fund_requested', at, details: { transaction, amount: action.amount, currency: action.currency } }];
  if (action.kind === 'cancel') return [{ action: 'cancel_requested', at, details: { transaction, outcome: action.outcome, reason: action.detail } }];
  if (action.kind === 'cancel_again') {
    return [{ action: action.given_up ? 'cancel_given_up' : 'cancel_requested', at, details: { transaction, outcome: row.outcome, sends: action.sends, ...(action.given_up && row.cancel_accepted_at ? { accepted_at: row.cancel_accepted_at } : {}) } }];
  }
  if (action.kind === 'hold') return [{ action: 'answer_mismatch', at, details: { transaction, reason: action.detail } }];
  return [];
}

function decideChange(row: PipelineRow, seen: Seen, now: number, policy: Policy): Decision {
  const { tx, asked } = seen;
  const source = SOURCE[asked];
  const counted = source === 'polling';
  // [D10] A 200 to paybatch's own funding call that came back after the row was held meanwhile (a webhook or a read
  // that did not match): still proof that its transaction was funded. The debit is recorded; the row stays held.
  if (row.phase === 'held' && asked === 'fund' && row.funded_at === null && row.fund_attempts > 0) {
    return { patch: { changes: { funded_at: iso(now), heard_at: iso(now) } }, action: { kind: 'none' }, label: 'applied' };
  }
  if (!isInFlight(row.phase) && row.phase !== 'final') return none(row.phase === 'held' ? 'held' : 'not_in_flight');
  if (row.phase === 'creating' && asked !== 'create' && asked !== 'lookup') return none('not_created_yet');

  const adopting = row.phase === 'creating';
  const funded = row.funded_at !== null;
  const at = trustedUpdatedAt(tx.updated_at, now);
  const fundedState = isFundedState(tx.state) || (tx.raw.funded_at !== undefined && tx.raw.funded_at !== null);
  // Once funded (or sent in a funding's guard and answered or seen funded), the input amount may not change [D10].
  const committed = funded || (row.phase === 'funding' && (asked === 'fund' || fundedState)) ? row.input_amount : null;
  const mismatches = checkAnswer({ external_id: row.external_id, request: row.request, transaction_id: adopting ? null : row.transaction_id, committed_input_amount: committed }, tx);
  if (mismatches.length > 0) return hold(row, asked, mismatches, now);
  if (row.phase === 'final') return none('after_final');

  // A row in funding may have been funded whatever its stored state says: a 'canceled' seen meanwhile is not final
  // until its funding is known (it may be refunded).
  const newer = adopting || isNewer({ state: row.state, at: row.observed_at, funded: funded || row.phase === 'funding' }, { state: tx.state, at });
  // [D10] A 200 to paybatch's own funding call is proof of funding, whatever the age of the state it carries.
  const ownFunding = asked === 'fund' && row.phase === 'funding';
  const waitingDeadline = (state: string | null, created: string | null): number | undefined =>
    isWaitingForSender(state) && created ? Date.parse(created) + policy.fundingDeadlineMs : undefined;
  const follow = (changes: RowChanges): RowPatch => {
    const created = changes.created_at ?? row.created_at;
    const next = nextReadAt({ created_at: created, reads: row.reads }, now, policy.polling, counted, waitingDeadline(changes.state ?? row.state, created));
    return { changes: { ...changes, next_read_at: next }, countRead: counted, learned: source };
  };

  // The same observation again (a read that found nothing new) is current, not stale: time-based rules (deadlines) still apply.
  const same = tx.state === row.state && at === row.observed_at;
  if (!newer && !same && !ownFunding) {
    // Read again no later than the sender's deadline, as after any other read.
    return { patch: null, schedule: counted ? { at: nextReadAt(row, now, policy.polling, true, waitingDeadline(row.state, row.created_at)), counted: true } : undefined, action: { kind: 'none' }, label: 'stale' };
  }
  const changes: RowChanges = newer ? observed(row, tx, iso(now), at) : { heard_at: iso(now) };
  let phase = row.phase;
  if (adopting) {
    changes.created_at = adoptedCreatedAt(row, tx, asked, now);
    phase = 'created';
  }
  const state = newer ? tx.state : (row.state ?? tx.state);
  const seenFunded = ownFunding || isFundedState(state) || fundedState;
  // A row being funded is moved only forward by what others saw: whether its funding happened, its owner finds out.
  if (phase === 'funding' && !ownFunding && asked !== 'resolve' && !seenFunded) return { patch: { changes, learned: source }, action: { kind: 'none' }, label: 'applied' };
  if (seenFunded && !funded) changes.funded_at = iso(now);
  const fundedNow = funded || seenFunded;

  if (isTxState(state) && isFinal(state, fundedNow)) return { patch: { changes: { ...changes, phase: 'final', next_read_at: null }, learned: source, countRead: counted }, action: { kind: 'none' }, label: 'applied' };
  if (fundedNow && UNFUNDED_AT_SERVICE_PHASES.includes(phase)) return { patch: follow({ ...changes, phase: 'funded' }), action: { kind: 'none' }, label: 'applied' };

  const rowNow = { ...row, created_at: changes.created_at ?? row.created_at };
  if (phase === 'created') {
    if (state === 'approved') return counting(fundOrEnd(rowNow, tx, { ...changes, phase: 'created' }, now, policy), source, counted);
    if (isWaitingForSender(state) && now >= fundingDeadline(rowNow, policy, now)) {
      const deadline = fundingDeadline(rowNow, policy, now);
      return counting(cancel(REASONS.senderNotApproved, `the sender was still ${state} (KYC) at engine.funding_deadline_ms ${duration(policy.fundingDeadlineMs)} after creation (deadline ${iso(deadline)})`, now, policy.polling, { ...changes, phase: 'created' }), source, counted);
    }
    return { patch: follow({ ...changes, phase: 'created' }), action: { kind: 'none' }, label: 'applied' };
  }
  if (phase === 'funding') {
    // Here only the step that owns the funding intent, reading to resolve it, concludes it did not happen.
    if (state === 'approved' && row.fund_attempts < policy.fundAttempts) {
      // Funded again at the amount read now: reserved again at that amount (a quote may have moved), its guard checked again.
      return counting(fundOrEnd(rowNow, tx, changes, now, policy), source, counted);
    }
    return { patch: follow({ ...changes, phase: 'created' }), action: { kind: 'none' }, label: 'applied' };
  }
  if (phase === 'cancelling') return cancelAgain(row, state, tx.raw.may_cancel, now, policy.polling, follow(changes));
  return { patch: follow(changes), action: { kind: 'none' }, label: 'applied' };
}

/** A decision made outside `decide` records the intents of its calls too (after `before`, the audits it carries over). */
export function withIntentAudits(row: PipelineRow, decision: Decision, now: number, before: RowAudit[] = []): Decision {
  if (!decision.patch || decision.patch.audits) return decision;
  const audits = [...before, ...intentAudits(row, decision, iso(now))];
  return audits.length > 0 ? { ...decision, patch: { ...decision.patch, audits } } : decision;
}
