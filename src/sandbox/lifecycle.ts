/**
 * The transaction and sender state machines, as pure functions: given a record,
 * the time its step is due and the configured delays, return the next record
 * and what happened. The service persists the result and emits the events.
 */
import type { SandboxConfig } from './config.js';
import type { SenderRecord, TransactionRecord, TransactionState } from './model.js';
import { UNFUNDED } from './model.js';
import type { Random } from './random.js';
import type { ReasonCode } from './reason-codes.js';

export interface StepResult {
  tx: TransactionRecord;
  /** States entered, in order; each becomes a `transaction.<state>` event. */
  entered: TransactionState[];
  /** An amount to credit back to the balance (a refund). */
  credit?: string;
}

type Delays = SandboxConfig['payout'];

function enter(tx: TransactionRecord, state: TransactionState, at: number, reason: ReasonCode | null = null): TransactionRecord {
  return { ...tx, state, reason_code: reason, updated_at: at };
}

function schedule(tx: TransactionRecord, step: TransactionRecord['next_step'], at: number | null): TransactionRecord {
  return { ...tx, next_step: step, next_at: step === null ? null : at };
}

function payoutDelay(tx: TransactionRecord, delays: Delays, random: Random): number {
  if (tx.outcome === 'quick') return delays.quick_ms;
  const [min, max] = tx.outcome === 'slow' ? delays.slow_delay_ms : delays.delay_ms;
  return random.between(min, max);
}

/** Where a payout attempt ends, per the record's deterministic outcome. */
function finish(tx: TransactionRecord, at: number, delays: Delays): StepResult {
  const fail = (state: TransactionState, reason: ReasonCode): StepResult => ({
    tx: schedule(enter(tx, state, at, reason), null, null),
    entered: [state],
  });
  switch (tx.outcome) {
    case 'error_then_paid':
      if (tx.retries === 0) {
        return { tx: schedule(enter(tx, 'error', at, 'provider_unavailable'), 'retry', at + delays.error_retry_ms), entered: ['error'] };
      }
      break;
    case 'error_permanent':
      return fail('error', tx.type === 'cash' ? 'recipient_phone_number_invalid' : 'recipient_bank_account_invalid');
    case 'manual':
      return fail('manual', 'recipient_account_invalid');
    case 'stuck':
      return fail('stuck', 'provider_timeout');
    case 'exception':
      return fail('exception', 'internal_exception');
    default:
      break;
  }
  return { tx: schedule({ ...enter(tx, 'paid', at), paid_at: at }, null, null), entered: ['paid'] };
}

/** Applies the record's due step. `at` is the time the step was due. */
export function applyTransactionStep(tx: TransactionRecord, at: number, delays: Delays, random: Random): StepResult {
  switch (tx.next_step) {
    case 'expire':
      if (!UNFUNDED.has(tx.state)) return { tx: schedule(tx, null, null), entered: [] };
      return { tx: schedule(enter(tx, 'canceled', at, 'funding_window_expired'), null, null), entered: ['canceled'] };
    case 'receive':
      return { tx: schedule(enter(tx, 'received', at), 'process', at), entered: ['received'] };
    case 'process':
    case 'retry': {
      const retries = tx.next_step === 'retry' ? tx.retries + 1 : tx.retries;
      const processing = { ...enter(tx, 'processing', at), retries };
      return { tx: schedule(processing, 'finish', at + payoutDelay(tx, delays, random)), entered: ['processing'] };
    }
    case 'finish':
      return finish(tx, at, delays);
    case 'cancel': {
      const canceled = enter(tx, 'canceled', at, 'cancelled_by_client');
      if (tx.funded_at === null) return { tx: schedule(canceled, null, null), entered: ['canceled'] };
      return { tx: schedule(canceled, 'refund', at + delays.refund_ms), entered: ['canceled'] };
    }
    case 'refund': {
      const refunded = { ...enter(tx, 'refunded', at, tx.reason_code), refunded_amount: tx.input_amount };
      return { tx: schedule(refunded, null, null), entered: ['refunded'], credit: tx.input_amount };
    }
    case null:
      return { tx, entered: [] };
  }
}

/** [D10] Funding moves an approved transaction into the funded flow. */
export function fundedTransaction(tx: TransactionRecord, at: number, delays: Delays): TransactionRecord {
  return schedule({ ...enter(tx, 'pending', at), funded_at: at }, 'receive', at + delays.clearing_ms);
}

/** [D11] A cancellation is accepted now and carried out asynchronously. */
export function cancelRequested(tx: TransactionRecord, at: number, delays: Delays): TransactionRecord {
  return schedule({ ...tx, cancel_requested_at: at }, 'cancel', at + delays.cancel_ms);
}

export function isSanctioned(details: Record<string, string>, sanctionList: readonly string[]): boolean {
  const normalise = (s: string): string => s.trim().replace(/\s+/g, ' ').toLowerCase();
  const name = normalise(`${details.first_name ?? ''} ${details.last_name ?? ''}`);
  return sanctionList.some((entry) => normalise(entry) === name);
}

/** [3.3] A new sender's first state and scheduled KYC step. */
export function newSenderState(
  details: Record<string, string>,
  at: number,
  kyc: SandboxConfig['kyc'],
): Pick<SenderRecord, 'state' | 'next_step' | 'next_at'> {
  const sanctioned = isSanctioned(details, kyc.sanction_list);
  if (kyc.mode === 'waived') return { state: sanctioned ? 'rejected' : 'approved', next_step: null, next_at: null };
  return { state: 'initial', next_step: sanctioned ? 'reject' : 'verify', next_at: at + kyc.verify_after_ms };
}

/** KYC review: initial, then verified, then approved; a sanctioned name ends rejected. */
export function applySenderStep(sender: SenderRecord, at: number, kyc: SandboxConfig['kyc']): SenderRecord {
  const moved = (state: SenderRecord['state'], next: SenderRecord['next_step'], nextAt: number | null): SenderRecord => ({
    ...sender, state, updated_at: at, next_step: next, next_at: nextAt,
  });
  switch (sender.next_step) {
    case 'verify':
      return moved('verified', 'approve', at + kyc.approve_after_ms);
    case 'approve':
      return moved('approved', null, null);
    case 'reject':
      return moved('rejected', null, null);
    case null:
      return sender;
  }
}
