/**
 * What a person should do with a row, by where it stands: one text per state,
 * written once and shown by the attention page, `status` and its JSON, and the
 * result file's next_step column. Pure.
 *
 * Advice never leads to paying twice: a payout that may still pay out is never
 * to be paid again; "pay again" is offered only through corrections (which
 * refuse while the original may still pay), and only once the original can no
 * longer pay (canceled, refunded, or never sent). A payout the service does not
 * let paybatch stop (`may_cancel` false, or not known to be true for a state
 * that usually cannot be stopped) is said to be unstoppable: wait or ask.
 */
import { CANCEL_SENDS, DUPLICATE_HOLD, REASONS, UNSTOPPABLE_STATES, isBeforeSending, isCancelGivenUp, isNeverSentEnd } from '../payout-states.js';
import type { Phase } from '../payout-states.js';

export interface AdviceInput {
  batch_id?: string;
  external_id: string | null;
  phase: Phase;
  state: string | null;
  outcome: string | null;
  /** The service's may_cancel as last seen; null or absent when not known. */
  may_cancel?: boolean | null;
  /** Cancellations paybatch sent while the row was cancelling (see isCancelGivenUp). */
  cancels_sent?: number | null;
  /** When the service accepted its cancellation (202), if it did. */
  cancel_accepted_at?: string | null;
}

const CORRECT = (batch: string): string => `paybatch corrections ${batch}`;

const UNSTOPPABLE: ReadonlySet<string> = new Set(UNSTOPPABLE_STATES);

/** `batchId`: the batch its commands name, when the row does not say (a result row); BATCH when neither does. */
export function adviceFor(row: AdviceInput, batchId?: string): string {
  const batch = row.batch_id ?? batchId ?? 'BATCH';
  const id = row.external_id ?? 'ID';
  if (row.phase === DUPLICATE_HOLD) {
    return `Held before it was sent: a possible duplicate of an earlier payment (see the reason). If it is meant, allow it (paybatch allow ${batch} --external-id ${id} --reason TEXT --as NAME); if not, cancel it (paybatch cancel --batch ${batch} --external-id ${id}). Nothing of it was sent.`;
  }
  if (isBeforeSending(row.phase)) {
    return 'Not sent yet: paybatch sends it (once its batch is released, where approvals are on). Nothing to do; do not pay it another way.';
  }
  if (row.phase === 'held') {
    return 'The service answered with another transaction, amount or currency than asked: compare with the service before anything else; cancel once a read returns the row\'s own transaction. Do not pay it again: it may still pay out.';
  }
  if (isCancelGivenUp(row)) {
    const sent = row.cancel_accepted_at ? `The service accepted paybatch's cancellation (${row.cancel_accepted_at}) but has not carried it out` : `paybatch sent its cancellation ${CANCEL_SENDS} times and the service still holds the payout as cancellable`;
    return `${sent}: ask the service, with the transaction id, to cancel it or to say why not; paybatch keeps following it. Do not pay it again: it may still pay out.`;
  }
  if (isNeverSentEnd(row.phase)) {
    if (row.outcome === REASONS.possibleDuplicate) return 'Not sent: held as a possible duplicate and cancelled. If it is owed after all, pay it through corrections.';
    return `Never sent (${row.outcome ?? row.phase}): fix the cause, then pay it through corrections (${CORRECT(batch)}).`;
  }
  const state = row.state ?? '';
  const stoppable = row.may_cancel === true || (row.may_cancel !== false && !UNSTOPPABLE.has(state));
  const cannotStop = 'paybatch cannot stop it now (the service does not allow a cancel in this state): wait for it, or ask the service with the transaction id. Do not pay it again: it may still pay out; only once it ends canceled or refunded can it be paid again, through corrections.';
  switch (state) {
    case 'paid': return 'Paid: nothing to do.';
    case 'refunded':
    case 'canceled':
      return `Not paid; the money is back. If it is still owed, pay it again through corrections (${CORRECT(batch)}).`;
    case 'stuck':
      return stoppable
        ? `Stuck at the service: ask the service, or cancel it (paybatch cancel --batch ${batch} --external-id ${id}); once it is refunded, pay it again through corrections. Never pay it again while it may still pay out.`
        : `Stuck at the service: ${cannotStop}`;
    case 'processing':
    case 'mispaid':
      return stoppable ? `On its way at the service: wait; cancel it only if it must not arrive (paybatch cancel --batch ${batch} --external-id ${id}).` : `On its way at the service: ${cannotStop}`;
    case 'manual':
      return stoppable
        ? `The service holds it for a manual check: answer the service's request, or cancel it (paybatch cancel --batch ${batch} --external-id ${id}); pay again only through corrections once it is refunded.`
        : `The service holds it for a manual check: answer the service's request. ${cannotStop}`;
    case 'error':
      return stoppable
        ? `Failed at the service: check the recipient's details, cancel it (paybatch cancel --batch ${batch} --external-id ${id}) and, once it is refunded, pay it again through corrections with the details fixed.`
        : `Failed at the service: ${cannotStop}`;
    case 'exception': return `An exception at the service: raise it with the service's support, with the transaction id. Do not pay it again: it may still pay out.`;
    default: return 'In flight at the service: wait; paybatch follows it to its end.';
  }
}
