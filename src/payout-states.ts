/**
 * The vocabulary of a payout's life, written once (STYLE 15, 16) and imported by
 * the engine, the store, the reports and the daemon: the service's transaction
 * states [3.1], paybatch's row phases, its reason codes, the named sets of them,
 * and the one rule that says whether an observation of a transaction is newer
 * than what is stored.
 *
 * Glossary: a *row* is one line of a batch file; its *phase* is where paybatch's
 * own pipeline has got with it (see PHASES); its *state* is the service's state
 * of its transaction (see TX_STATES). An *observation* is what the service said
 * about the transaction at one moment (an answer, a read, a webhook). A row is
 * *final* when its transaction can move no more; a batch is *settled* when none
 * of its rows is still being worked on.
 * This module imports nothing, so that every layer can import it and the
 * arrows between folders still point one way.
 */

/** The service's transaction states, in the order of [3.1]. */
export const TX_STATES = [
  'initial', 'verified', 'approved', 'pending', 'mispaid', 'received', 'processing',
  'manual', 'paid', 'canceled', 'refunded', 'exception', 'error', 'stuck',
] as const;
export type TxState = (typeof TX_STATES)[number];

/** Whether a string the service sent is one of its states [3.1]. */
export const isTxState = (state: string | null): state is TxState => state !== null && (TX_STATES as readonly string[]).includes(state);

/** The service's sender states [3.3]: a sender must be approved before its transactions can be funded. */
export const SENDER_STATES = ['initial', 'verified', 'approved', 'banned', 'rejected', 'disabled'] as const;
export type SenderState = (typeof SENDER_STATES)[number];

/** Sender states that mean its waiting rows will never be funded [3.3]: paybatch cancels them. */
export const SENDER_STOPPED_STATES: readonly SenderState[] = ['rejected', 'banned', 'disabled'];
export const isSenderStopped = (state: string): state is SenderState => (SENDER_STOPPED_STATES as readonly string[]).includes(state);

/**
 * paybatch's phases of a row: checking (being validated), invalid, refused (by a
 * rule of its own: a duplicate, a correction not allowed), not_sent (ended before
 * it was sent), ready, creating, created, funding, funded, cancelling, final, held
 * (for a person).
 */
export const PHASES = [
  'checking', 'invalid', 'refused', 'not_sent', 'ready', 'creating', 'created', 'funding', 'funded', 'cancelling', 'final', 'held',
  'duplicate_hold',
] as const;
export type Phase = (typeof PHASES)[number];

const within = <T extends string>(set: readonly T[]) => (value: string | null): value is T => value !== null && (set as readonly string[]).includes(value);

/** States a transaction is in only once funded [3.1]. */
export const FUNDED_STATES: ReadonlySet<TxState> = new Set<TxState>(['pending', 'mispaid', 'received', 'processing', 'paid', 'manual', 'error', 'exception', 'stuck', 'refunded']);
export const isFundedState = (state: string | null): state is TxState => state !== null && (FUNDED_STATES as ReadonlySet<string>).has(state);

/** Created, the sender not approved yet [3.3]: not fundable. */
export const WAITING_FOR_SENDER: ReadonlySet<TxState> = new Set<TxState>(['initial', 'verified']);
export const isWaitingForSender = (state: string | null): state is TxState => state !== null && (WAITING_FOR_SENDER as ReadonlySet<string>).has(state);

/** States that need a person to look [3.1]. */
export const ATTENTION_STATES: ReadonlySet<TxState> = new Set<TxState>(['manual', 'error', 'stuck', 'exception']);
export const isAttentionState = (state: string | null): state is TxState => state !== null && (ATTENTION_STATES as ReadonlySet<string>).has(state);

/** States a transaction ends in: it moves no more (canceled only when it was never funded: see isFinal). */
export const FINAL_STATES: readonly TxState[] = ['paid', 'refunded', 'canceled'];
export const isFinalState = within(FINAL_STATES);

/** States a payout usually cannot be stopped in: money on its way to the recipient. */
export const UNSTOPPABLE_STATES: readonly TxState[] = ['stuck', 'processing', 'mispaid'];

/** States of a transaction not funded yet [3.1]: created, its sender approved or not yet. */
export const UNFUNDED_STATES: readonly TxState[] = ['initial', 'verified', 'approved'];

/** States from which the service still accepts a cancellation (may_cancel) [3.1]: the sandbox's model of the service. */
export const SERVICE_CANCELLABLE_STATES: readonly TxState[] = [...UNFUNDED_STATES, 'pending', 'received', 'error', 'manual', 'exception'];

/** [D11] Cancellations sent for a row in all while its transaction stays cancellable: the first, and two again (decide.ts). */
export const CANCEL_SENDS = 3;

/** A row whose cancellation paybatch sent CANCEL_SENDS times and then gave up on, the service still holding it cancellable: for a person. */
export const isCancelGivenUp = (row: { phase: string; cancels_sent?: number | null }): boolean => row.phase === 'cancelling' && (row.cancels_sent ?? 0) > CANCEL_SENDS;

/** States in which a transaction's money did not reach, and will never reach, the recipient. */
export const UNPAID_FINAL_STATES: readonly TxState[] = ['canceled', 'refunded'];
export const isUnpaidFinalState = within(UNPAID_FINAL_STATES);

/**
 * A row held before it was sent as a possible duplicate payment (engine/duplicates.ts): not sent until a person
 * allows it (paybatch allow), which makes it ready again, or cancels it, which ends it not sent.
 */
export const DUPLICATE_HOLD = 'duplicate_hold' satisfies Phase;

/** Phases of a row paybatch is still working on: a batch settles when none of its rows is in one. */
export const UNSETTLED_PHASES: readonly Phase[] = ['ready', 'creating', 'created', 'funding', 'funded', 'cancelling', DUPLICATE_HOLD];

/** Phases a row ends in that count it settled in a batch's summary. */
export const SETTLED_PHASES: readonly Phase[] = ['final', 'not_sent', 'held'];

/**
 * Where an unsettled row is, for people (see engine/batch-stage.ts): not sent yet (ready: nothing of it has left
 * paybatch), being sent (its create call under way, or its outcome not known yet), and in flight at the service (its
 * transaction exists there: created, being funded, funded, being cancelled). Only the last are "in flight". A row held
 * as a possible duplicate is none of these: it waits for a person.
 */
export const NOT_SENT_YET_PHASES: readonly Phase[] = ['ready'];
export const SENDING_PHASES: readonly Phase[] = ['creating'];
export const AT_SERVICE_PHASES: readonly Phase[] = ['created', 'funding', 'funded', 'cancelling'];

/** Phases of a row whose transaction does not exist at the service yet: not sent yet, or being sent. */
export const NOT_CREATED_PHASES: readonly Phase[] = [...NOT_SENT_YET_PHASES, ...SENDING_PHASES];
export const isNotCreatedYet = (phase: Phase): boolean => NOT_CREATED_PHASES.includes(phase);

/** Phases a row waits in before being sent: checking (its external_id looked at), or ready. */
export const BEFORE_SENDING_PHASES: readonly Phase[] = ['checking', 'ready'];
export const isBeforeSending = (phase: Phase): boolean => BEFORE_SENDING_PHASES.includes(phase);

/** Phases of a row whose transaction exists at the service and is not known to be funded: a funded state moves it to funded. */
export const UNFUNDED_AT_SERVICE_PHASES: readonly Phase[] = ['created', 'funding'];

/** Phases of a row ended without being sent, though it passed the checks or was refused by a rule of paybatch's. */
export const ENDED_UNSENT_PHASES: readonly Phase[] = ['refused', 'not_sent'];
export const isEndedUnsent = (phase: Phase): boolean => ENDED_UNSENT_PHASES.includes(phase);

/** Phases of a row the console shows as not paid when it has no state of the service's: invalid, ended not sent, held. */
export const NOT_PAID_PHASES: readonly Phase[] = ['invalid', 'not_sent', 'held'];

/** Phases of a row ended never sent (checking is not an end): invalid, refused, not_sent. */
export const NEVER_SENT_ENDS: readonly Phase[] = ['invalid', ...ENDED_UNSENT_PHASES];
export const isNeverSentEnd = (phase: Phase): boolean => NEVER_SENT_ENDS.includes(phase);

/** Phases whose transaction is read on the polling schedule [D17]. */
export const FOLLOWED_PHASES: readonly Phase[] = ['created', 'funded', 'cancelling'];

/** Phases of rows that were never sent and never will be: their external_id is free for another batch. */
export const NEVER_SENT_PHASES: readonly Phase[] = ['checking', 'invalid', 'refused', 'not_sent'];

/** Phases of rows never to be sent because of what they are (a row not_sent was sendable, and ended before). */
export const UNSENDABLE_PHASES: readonly Phase[] = ['checking', 'invalid', 'refused'];
/** Phases of rows that passed the checks: sent, being sent, or that were to be sent. */
export const SENDABLE_PHASES: readonly Phase[] = PHASES.filter((phase) => !UNSENDABLE_PHASES.includes(phase));

/** Phases of a row whose transaction paybatch is working on now (an answer to it may be acted on). */
export const IN_FLIGHT_PHASES: readonly Phase[] = ['creating', 'created', 'funding', 'funded', 'cancelling'];
export const isInFlight = within(IN_FLIGHT_PHASES);

/** Phases of a row whose transaction is not final yet. */
export const OPEN_TRANSACTION_PHASES: readonly Phase[] = ['created', 'funding', 'funded', 'cancelling'];

/** Phases a row may be cancelled from on request (cancel-on-request.ts). */
export const CANCELLABLE_PHASES: readonly Phase[] = ['created', 'funded', 'held'];

/** Phases of rows that may have been corrected: never sent, or ended (perhaps unpaid). */
export const CORRECTABLE_PHASES: readonly Phase[] = ['invalid', 'refused', 'not_sent', 'final'];

/**
 * Whether a row's input amount counts against its batch's budget: being funded, funded (refunded or not, cancelling
 * ones included), or held after a funding call was sent for it (whether that debit happened is for a person to find out).
 */
export function committedToBudget(row: { phase: string; funded_at: string | null; fund_attempts: number }): boolean {
  return row.phase === 'funding' || row.funded_at !== null || (row.phase === 'held' && row.fund_attempts > 0);
}

/**
 * paybatch's own reasons for ending a row, carried in the results as its
 * state_reason_code beside the text naming the limit and both amounts.
 */
export const REASONS = {
  /** The computed input amount is missing or over engine.max_input_per_row. */
  quoteRejected: 'quote_rejected',
  /** Funding the row would take the batch over engine.batch_budget. */
  overBudget: 'over_budget',
  /** The service refused the funding for lack of balance, or the balance had run out before. */
  insufficientFunds: 'insufficient_funds',
  /** The sender was still in KYC when engine.funding_deadline_ms passed. */
  senderNotApproved: 'sender_not_approved',
  /** Not funded by engine.funding_deadline_ms after creation (the service's calls kept failing). */
  fundingDeadline: 'funding_deadline',
  /** The service refused the funding for a reason paybatch cannot act on: its message is kept. */
  fundRefused: 'fund_refused',
  /** An answer did not match what was asked: nothing more is done with the row; a person must look. */
  answerMismatch: 'answer_mismatch',
  /** The sender was rejected, banned or disabled [3.3]. */
  senderRejected: 'sender_rejected',
  cancelledOnRequest: 'cancelled_on_request',
  rejectedByService: 'rejected_by_service',
  corridorInactive: 'corridor_inactive',
  /** A person rejected the batch: nothing of it is sent. */
  approvalRejected: 'approval_rejected',
  /** Not approved before its request expired: nothing of it is sent. */
  approvalExpired: 'approval_expired',
  /** Its approvals do not verify (edited or inserted by hand, the file or the policy changed): held for a person. */
  approvalInvalid: 'approval_invalid',
  /** Its file changed after it was taken in (still being written): nothing of it was sent. */
  fileChanged: 'file_changed',
  externalIdAlreadyUsed: 'external_id_already_used',
  /**
   * An earlier row pays the same recipient account the same amount in the same currency within
   * batch.duplicate_window: held until a person allows it; ended not sent when cancelled instead.
   */
  possibleDuplicate: 'possible_duplicate',
} as const;
export type ReasonCode = (typeof REASONS)[keyof typeof REASONS];

/** Rows refused by a limit (quote, budget, balance, deadlines): counted by reason in summaries and status. */
export const LIMIT_REASONS: ReadonlySet<string> = new Set<ReasonCode>([
  REASONS.quoteRejected, REASONS.overBudget, REASONS.insufficientFunds, REASONS.senderNotApproved, REASONS.fundingDeadline,
]);

/** paybatch's own refusals: a quote, a budget, the balance, a deadline, a funding the service refused. */
export const REFUSAL_OUTCOMES: ReadonlySet<string> = new Set([...LIMIT_REASONS, REASONS.fundRefused]);

/** Reasons that make a run end with the attention exit code: money safety needs a person. */
export const PERSON_NEEDED_REASONS: ReadonlySet<string> = new Set<ReasonCode>([REASONS.answerMismatch, REASONS.fundRefused, REASONS.insufficientFunds, REASONS.approvalInvalid, REASONS.possibleDuplicate]);

/**
 * The checked conversions at the store's edge, where a column's text becomes a word of the vocabulary: a value the
 * vocabulary does not have (a database written by hand, or by a version that knew other words) is an error, not
 * passed on for the engine to compare against.
 */
const PHASE_SET: ReadonlySet<string> = new Set(PHASES);
export function phaseOf(value: string): Phase {
  if (!PHASE_SET.has(value)) throw new Error(`the database holds a row in phase "${value}", which paybatch does not have (${PHASES.join(', ')})`);
  return value as Phase;
}

const REASON_CODES: readonly string[] = Object.values(REASONS);
export const isReasonCode = (value: string | null): value is ReasonCode => value !== null && REASON_CODES.includes(value);

export function reasonCodeOf(value: string | null): ReasonCode | null {
  if (value !== null && !isReasonCode(value)) throw new Error(`the database holds a row ended for "${value}", which is not one of paybatch's reasons (${REASON_CODES.join(', ')})`);
  return value;
}

/** A row is final when paid, refunded, or cancelled before it was funded. */
export function isFinal(state: TxState, funded: boolean): boolean {
  return state === 'paid' || state === 'refunded' || (state === 'canceled' && !funded);
}

/** States in the order a transaction moves through them, for observations that carry no time [3.1]. */
const STATE_RANK: Readonly<Record<TxState, number>> = {
  initial: 0, verified: 1, approved: 2, pending: 3, mispaid: 4, received: 4, processing: 5,
  error: 6, manual: 6, exception: 6, stuck: 6, canceled: 8, paid: 9, refunded: 9,
};

const rank = (state: string | null): number => (state === null ? -1 : isTxState(state) ? STATE_RANK[state] : 0);

export interface Stamped {
  state: string | null;
  /** The service's updated_at (ISO 8601 UTC), or null when it gave none. */
  at: string | null;
}

/**
 * How far ahead of paybatch's clock a service's updated_at may be and still be
 * trusted: further is a clock gone wrong (or a lie) that would freeze the row,
 * since nothing later would look newer. Such an observation counts as undated.
 */
export const MAX_CLOCK_SKEW_MS = 10 * 60_000;

/** The service's updated_at as an observation's time: null when it gave none, or put it beyond the skew allowed. */
export function trustedUpdatedAt(updatedAt: string | null, now: number): string | null {
  return updatedAt !== null && Date.parse(updatedAt) <= now + MAX_CLOCK_SKEW_MS ? updatedAt : null;
}

/**
 * Whether an observation is newer than the stored one, and may replace it. The
 * service's updated_at decides (see trustedUpdatedAt); an undated observation
 * never replaces a dated one; between undated ones (or equal times) the state's
 * rank decides, so a state never moves back. A final state is never replaced.
 */
export function isNewer(stored: Stamped & { funded: boolean }, seen: Stamped): boolean {
  if (stored.state === null) return true;
  if (isTxState(stored.state) && isFinal(stored.state, stored.funded)) return false;
  if (stored.at !== null) {
    if (seen.at === null) return false;
    if (seen.at !== stored.at) return seen.at > stored.at;
  } else if (seen.at !== null) {
    return true;
  }
  return rank(seen.state) > rank(stored.state);
}
