/**
 * The vocabulary of a payout's life, written once (STYLE 15) and imported by the
 * engine, the store, the reports and the daemon: the service's transaction
 * states [3.1], paybatch's row phases, its reason codes, and the one rule that
 * says whether an observation of a transaction is newer than what is stored.
 *
 * Glossary: a *row* is one line of a batch file; its *phase* is where paybatch's
 * own pipeline has got with it (checking, invalid, refused, not_sent, ready,
 * creating, created, funding, funded, cancelling, final, held); its *state* is
 * the service's state of its transaction. An *observation* is what the service
 * said about the transaction at one moment (an answer, a read, a webhook).
 * This module imports nothing, so that every layer can import it and the
 * arrows between folders still point one way.
 */

/** States a transaction is in only once funded [3.1]. */
export const FUNDED_STATES: ReadonlySet<string> = new Set(['pending', 'mispaid', 'received', 'processing', 'paid', 'manual', 'error', 'exception', 'stuck', 'refunded']);

/** Created, the sender not approved yet [3.3]: not fundable. */
export const WAITING_FOR_SENDER: ReadonlySet<string> = new Set(['initial', 'verified']);

/** States that need a person to look [3.1]. */
export const ATTENTION_STATES: ReadonlySet<string> = new Set(['manual', 'error', 'stuck', 'exception']);

/**
 * A row held before it was sent as a possible duplicate payment (engine/duplicates.ts): not sent until a person
 * allows it (paybatch allow), which makes it ready again, or cancels it, which ends it not sent.
 */
export const DUPLICATE_HOLD = 'duplicate_hold';

/** Phases of a row paybatch is still working on: a batch settles when none of its rows is in one. */
export const UNSETTLED_PHASES: readonly string[] = ['ready', 'creating', 'created', 'funding', 'funded', 'cancelling', DUPLICATE_HOLD];

/** Phases whose transaction is read on the polling schedule [D17]. */
export const FOLLOWED_PHASES: readonly string[] = ['created', 'funded', 'cancelling'];

/** Phases of rows that were never sent and never will be: their external_id is free for another batch. */
export const NEVER_SENT_PHASES: readonly string[] = ['checking', 'invalid', 'refused', 'not_sent'];

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

/** Rows refused by a limit (quote, budget, balance, deadlines): counted by reason in summaries and status. */
export const LIMIT_REASONS: ReadonlySet<string> = new Set([
  REASONS.quoteRejected, REASONS.overBudget, REASONS.insufficientFunds, REASONS.senderNotApproved, REASONS.fundingDeadline,
]);

/** Reasons that make a run end with the attention exit code: money safety needs a person. */
export const PERSON_NEEDED_REASONS: ReadonlySet<string> = new Set([REASONS.answerMismatch, REASONS.fundRefused, REASONS.insufficientFunds, REASONS.approvalInvalid, REASONS.possibleDuplicate]);

/** A row is final when paid, refunded, or cancelled before it was funded. */
export function isFinal(state: string, funded: boolean): boolean {
  return state === 'paid' || state === 'refunded' || (state === 'canceled' && !funded);
}

/** States in the order a transaction moves through them, for observations that carry no time [3.1]. */
const STATE_RANK: Readonly<Record<string, number>> = {
  initial: 0, verified: 1, approved: 2, pending: 3, mispaid: 4, received: 4, processing: 5,
  error: 6, manual: 6, exception: 6, stuck: 6, canceled: 8, paid: 9, refunded: 9,
};

const rank = (state: string | null): number => (state === null ? -1 : STATE_RANK[state] ?? 0);

export interface Stamped {
  state: string | null;
  /** The service's updated_at (ISO 8601 UTC), or null when it gave none. */
  at: string | null;
}

/**
 * Whether an observation is newer than the stored one, and may replace it. The
 * service's updated_at decides; an undated observation never replaces a dated
 * one; between undated ones (or equal times) the state's rank decides, so a state
 * never moves back. A final state is never replaced.
 */
export function isNewer(stored: Stamped & { funded: boolean }, seen: Stamped): boolean {
  if (stored.state === null) return true;
  if (isFinal(stored.state, stored.funded)) return false;
  if (stored.at !== null) {
    if (seen.at === null) return false;
    if (seen.at !== stored.at) return seen.at > stored.at;
  } else if (seen.at !== null) {
    return true;
  }
  return rank(seen.state) > rank(stored.state);
}
