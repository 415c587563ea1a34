/**
 * The sandbox's records and how they look on the wire.
 *
 * Glossary: a *transaction* pays one recipient from the client's balance; a
 * *sender* is the client's customer, kept by `external_id` [2.2]; a *step* is
 * the next scheduled change of a record, due at `next_at` on the sandbox clock.
 */
import type { Outcome } from './outcomes.js';
import type { ReasonCode } from './reason-codes.js';
import { REASON_CODES } from './reason-codes.js';
import { SERVICE_CANCELLABLE_STATES, UNFUNDED_STATES } from '../payout-states.js';
import type { SenderState, TxState as TransactionState } from '../payout-states.js';

/**
 * The service's states [3.1] and its senders' [3.3]: the one vocabulary (payout-states.ts, which imports nothing), the
 * same words paybatch checks the service's answers against. The sandbox's own state machine is lifecycle.ts.
 */
export { SENDER_STATES, TX_STATES as TRANSACTION_STATES } from '../payout-states.js';
export type { SenderState, TxState as TransactionState } from '../payout-states.js';

export type TransactionStep = 'expire' | 'receive' | 'process' | 'finish' | 'retry' | 'cancel' | 'refund';
export type SenderStep = 'verify' | 'approve' | 'reject';

export type Details = Record<string, string>;

export interface TransactionRecord {
  id: string;
  external_id: string;
  type: 'bank' | 'cash';
  state: TransactionState;
  reason_code: ReasonCode | null;
  input_amount: string;
  input_currency: string;
  output_amount: string;
  output_currency: string;
  sender_id: string;
  recipient: Details;
  outcome: Outcome;
  created_at: number;
  updated_at: number;
  expires_at: number;
  funded_at: number | null;
  paid_at: number | null;
  cancel_requested_at: number | null;
  refunded_amount: string | null;
  retries: number;
  next_step: TransactionStep | null;
  next_at: number | null;
}

export interface SenderRecord {
  id: string;
  external_id: string;
  state: SenderState;
  details: Details;
  created_at: number;
  updated_at: number;
  next_step: SenderStep | null;
  next_at: number | null;
}

/** States from which a cancellation can still stop the payout (so `may_cancel` is true). */
const CANCELLABLE: ReadonlySet<TransactionState> = new Set(SERVICE_CANCELLABLE_STATES);

export const UNFUNDED: ReadonlySet<TransactionState> = new Set(UNFUNDED_STATES);

export function mayCancel(tx: TransactionRecord): boolean {
  return CANCELLABLE.has(tx.state);
}

let lastMs = Number.NaN;
let lastIso = '';
/** Many timestamps of one answer are equal (created = updated), so the last conversion is kept. */
function iso(ms: number | null): string | null {
  if (ms === null) return null;
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

/** Sender records are immutable (a change makes a new one), so each one's view is built once. */
const senderViews = new WeakMap<SenderRecord, Record<string, unknown>>();

export function senderView(sender: SenderRecord): Record<string, unknown> {
  let view = senderViews.get(sender);
  if (!view) {
    view = buildSenderView(sender);
    senderViews.set(sender, view);
  }
  return view;
}

function buildSenderView(sender: SenderRecord): Record<string, unknown> {
  return {
    ...sender.details,
    id: sender.id,
    external_id: sender.external_id,
    state: sender.state,
    created_at: iso(sender.created_at),
    updated_at: iso(sender.updated_at),
  };
}

/** [2.5] and [D8]: the transaction object, with the sender in full. */
export function transactionView(tx: TransactionRecord, sender: SenderRecord): Record<string, unknown> {
  return {
    id: tx.id,
    external_id: tx.external_id,
    type: tx.type,
    state: tx.state,
    state_reason: tx.reason_code ? REASON_CODES[tx.reason_code] : null,
    state_reason_details: tx.reason_code ? { code: tx.reason_code } : null,
    input_amount_in_cents: tx.input_amount,
    input_currency: tx.input_currency,
    output_amount_in_cents: tx.output_amount,
    output_currency: tx.output_currency,
    may_cancel: mayCancel(tx),
    refunded_amount_in_cents: tx.refunded_amount,
    sender: senderView(sender),
    recipient: { ...tx.recipient },
    created_at: iso(tx.created_at),
    updated_at: iso(tx.updated_at),
    expires_at: iso(tx.expires_at),
    funded_at: iso(tx.funded_at),
    paid_at: iso(tx.paid_at),
  };
}
