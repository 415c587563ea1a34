/**
 * The rows and batches as the store keeps and gives them: the types of the
 * store's port (port.ts), defined here, beside the store, and imported by the
 * code that uses it (engine, reports, batch reading), never the other way.
 */
import type { PayoutRequest } from '../api/payout-request.js';
import type { Issue } from '../validate/issue.js';
import type { RowFields } from '../validate/fields.js';
import type { Phase, ReasonCode } from '../payout-states.js';

export type BatchStatus = 'intake' | 'accepted' | 'rejected' | 'settled';
export type IntakePolicy = 'reject_file' | 'skip_invalid';

/** What an acceptance came to (IntakeStore.acceptBatch): the counts, or the batch accepted before with the same content, or null. */
export type AcceptOutcome = { ready: number; refused: number; invalid: number } | { sameContentAs: BatchRecord } | null;

export interface BatchRecord {
  id: string;
  file_name: string;
  sha256: string;
  size_bytes: number;
  status: BatchStatus;
  policy: IntakePolicy;
  rows_total: number;
  rows_valid: number;
  reason: string | null;
  received_at: string;
  settled_at: string | null;
  /** The claimed file's modification time (ms), to see a change after intake. */
  file_mtime_ms: number | null;
  /** Nothing is sent before this time (ms since the epoch). */
  send_after: number;
  /** 1 once its file was found unchanged at send_after: only then are its rows sent. */
  released: number;
  /** With approvals on: when it was released, and the MAC of that (see approvals/release-seal.ts). */
  released_at?: string | null;
  release_seal?: string | null;
  /** A corrections batch: the batch whose rows it pays again (the first its rows name). */
  corrects_batch?: string | null;
  /** The worker that took its file in (several workers on one database); null otherwise. */
  taken_by?: string | null;
  /** Who submitted it (the inbox's submitter), when approvals are on. */
  submitted_by: string | null;
  /** null (not needed), awaiting, approved, rejected, expired, held. */
  approval: string | null;
  approval_expires_at: string | null;
  approval_reason: string | null;
  /** State changes learned by webhook, by polling, and in answers to paybatch's own calls. */
  changes_by_webhook: number;
  changes_by_polling: number;
  changes_by_answer: number;
}

/** A batch as its intake begins: `taken_by` is kept where several workers share the database. */
export type NewBatch = Pick<BatchRecord, 'file_name' | 'sha256' | 'size_bytes' | 'policy' | 'received_at' | 'file_mtime_ms' | 'send_after'> & { taken_by?: string | null };

export interface NewRow {
  line: number;
  external_id: string | null;
  /** The request body of a valid row; null for an invalid one (or when `stored` carries it). */
  request: PayoutRequest | null;
  /** The request as stored, made where the row was checked (a worker thread): taken instead of `request`. */
  stored?: StoredRequest | null;
  errors: Issue[];
  /** A correction: the row it pays again. */
  original?: { batch: string; line: number } | null;
  /** An invalid row's values as read, kept for its corrections file. */
  fields?: RowFields | null;
}

export interface RowRecord {
  batch_id: string;
  line: number;
  external_id: string | null;
  phase: Phase;
  outcome: ReasonCode | null;
  errors: Issue[];
  request: PayoutRequest | null;
  outcome_detail: string | null;
  state: string | null;
  state_reason: string | null;
  state_reason_code: string | null;
  /** An invalid row's values as read; null for a valid row. */
  fields: RowFields | null;
  original_batch: string | null;
  original_line: number | null;
}

/** A row of a correction batch and the original it names. */
export interface CorrectionLink {
  line: number;
  external_id: string | null;
  original_batch: string;
  original_line: number;
}


/** A valid row's request as the store keeps it: its text (compact JSON, batch/request-text.ts), and the columns taken from it. */
export interface StoredRequest {
  json: string;
  inputCurrency: string;
  outputAmount: string;
  outputCurrency: string;
  recipientName: string | null;
  /**
   * The recipient account it pays, written one way (validate/recipient-key.ts); null when it names none. Made where the
   * row was checked, so that intake records it with the row without reading the request back.
   */
  recipientKey: string | null;
  /** Its corridor's country and payout type, as the store's corridor summary reads them from the stored request (store/request-sql.ts). */
  country: string | null;
  type: string;
}

/** How paybatch learned of a state: a webhook, a read of its own (polling), or the answer to a create or fund. */
export type ObservationSource = 'webhook' | 'polling' | 'answer';

/** A row as the pipeline decides on it: what was asked, where paybatch has got, and what the service last said. */
export interface PipelineRow {
  batch_id: string;
  line: number;
  external_id: string;
  /**
   * What was asked. An invalid row has none: it is null at run time where a read asks for invalid rows too (cancel
   * asks for any phase; toPipelineRow), and the pipeline never sends such a row. Typed as present for the engine,
   * which reads only sendable rows.
   */
  request: PayoutRequest;
  phase: Phase;
  /** paybatch's reason code for how the row ended, when paybatch ended it (REASONS in engine/states). */
  outcome: ReasonCode | null;
  /** The reason in words: which limit, and both amounts. */
  outcome_detail: string | null;
  transaction_id: string | null;
  /**
   * The service's word for its transaction's state, as it said it: one of TX_STATES, or a word it does not have,
   * kept as said and never acted on as a state (decide.ts; the lying-service properties in decide-lies.test.ts).
   * Hence text, not TxState: paybatch's own words (phase, outcome) are checked as they are read.
   */
  state: string | null;
  state_reason: string | null;
  state_reason_code: string | null;
  input_amount: string | null;
  input_currency: string | null;
  output_amount: string | null;
  output_currency: string | null;
  refunded_amount: string | null;
  created_at: string | null;
  /** When paybatch recorded the funding; null while unfunded. */
  funded_at: string | null;
  paid_at: string | null;
  refunded_at: string | null;
  /** When the row reached its final state (paybatch's clock); null while it has not. */
  settled_at: string | null;
  /** The service's updated_at of the newest observation kept. */
  observed_at: string | null;
  /** The service's may_cancel in the newest observation kept; null when it has not said (a row stored before it was kept). */
  may_cancel?: boolean | null;
  /** When paybatch last heard of the transaction (its own clock): for the catch-up after downtime. */
  heard_at: string | null;
  reads: number;
  next_read_at: number | null;
  fund_attempts: number;
  /**
   * [D11] Cancellations sent since the row entered cancelling (0 in a row stored before they were counted). One past
   * CANCEL_SENDS marks the give-up (payout-states.ts isCancelGivenUp), whether after three sends or after an accepted
   * cancellation left undone.
   */
  cancels_sent?: number;
  /** When the last of them was sent (paybatch's clock); null when none was recorded. */
  cancel_sent_at?: string | null;
  /** When the service accepted the cancellation (answered 202): it proceeds on its own and is not sent again. */
  cancel_accepted_at?: string | null;
  /** Bumped by every committed change: a decision is applied only if the row has not moved since it was read. */
  revision: number;
  /** A correction: the row it pays again (see engine/corrections.ts). */
  original_batch?: string | null;
  original_line?: number | null;
}

/** What a commit needs to know of the row as it stands: the columns its indexes depend on (but the next read's time), and its state. */
export type RowSeen = Pick<PipelineRow, 'phase' | 'state' | 'transaction_id' | 'funded_at'>;

/** The columns of a row a decision may change. */
export type RowChanges = Partial<Pick<PipelineRow,
  | 'phase' | 'outcome' | 'outcome_detail' | 'transaction_id' | 'state' | 'state_reason' | 'state_reason_code'
  | 'input_amount' | 'input_currency' | 'output_amount' | 'output_currency' | 'refunded_amount'
  | 'created_at' | 'funded_at' | 'paid_at' | 'refunded_at' | 'settled_at' | 'observed_at' | 'may_cancel' | 'heard_at'
  | 'next_read_at' | 'fund_attempts' | 'cancels_sent' | 'cancel_sent_at' | 'cancel_accepted_at'>> & {
  /** Replaces the row's errors (paybatch's reasons, the service's refusal, the fields that did not match). */
  errors?: Issue[];
};

export interface RowPatch {
  changes: RowChanges;
  /** The state changed, learned this way: counted per batch. */
  learned?: ObservationSource;
  /** Count a read against the polling budget [D17]. */
  countRead?: boolean;
  /**
   * Moving to funding reserves the row's input amount within the batch's budget,
   * atomically with the move: refused when the currency's balance ran out or the
   * budget would be exceeded.
   */
  reserve?: { currency: string; amount: bigint; budget: bigint | null };
  /** Written to the audit trail in the same transaction, about this row. */
  audits?: RowAudit[];
}

/**
 * What became of a commit: applied; or not, because the row moved since it was
 * read, the reservation was refused, or the transaction id belongs to another row.
 */
export type CommitOutcome =
  | { kind: 'applied' }
  | { kind: 'moved' }
  | { kind: 'over_budget'; committed: bigint }
  | { kind: 'stopped'; detail: string }
  | { kind: 'taken'; batch_id: string; line: number };

export interface BatchProgress {
  /** Rows to send (valid, accepted). */
  sendable: number;
  created: number;
  funded: number;
  /** Sendable rows whose part is over: final, held, or ended without being sent. */
  settled: number;
  /** Rows not final yet (as unsettledRows counts them). */
  unsettled: number;
  /** When the oldest row not final yet was created (or its batch received), if any. */
  oldest_unsettled_at: string | null;
  /** Of the unsettled rows: not sent yet, being sent, and in flight at the service (see AT_SERVICE_PHASES). */
  not_sent_yet: number;
  sending: number;
  at_service: number;
  /** When the oldest row in flight at the service was created there; null when none is. */
  oldest_in_flight_at: string | null;
}

/** When an unsettled row will next be read. */
export interface NextRead {
  line: number;
  external_id: string;
  phase: Phase;
  state: string | null;
  /** ms since the epoch; null when no read is scheduled (the row is being sent, created or funded). */
  next_read_at: number | null;
}

/** A corridor a batch's rows use (recipient's country, payout type, both currencies), as batch_corridors keeps it. */
export interface BatchCorridor {
  country_code: string;
  type: string;
  input_currency: string;
  output_currency: string;
  /** How many of the batch's rows were made ready on it at acceptance (for a batch accepted before the summary existed: ready when it was made). */
  rows: number;
}


/**
 * What /metrics shows of the store at a scrape, in one cheap read. Open batches
 * are those in intake or accepted (not settled, rejected or withdrawn).
 */
export interface MetricsFigures {
  /** Rows of open batches, by phase. */
  rows_by_phase: Record<string, number>;
  /** Rows of open batches in phase final, by the service's state (or paybatch's outcome when it ended the row without one). */
  final_by_state: Record<string, number>;
  /** Open batches waiting for approval, and when the oldest was received (ISO 8601). */
  awaiting_approval: number;
  oldest_awaiting_at: string | null;
  /**
   * Rows a person should look at: in an attention state (manual, error, stuck,
   * exception) or held (an answer that did not match), of open batches and of
   * those received since `recentSince`; and the oldest one's last observed change.
   */
  attention: number;
  oldest_attention_at: string | null;
}


/** Which rows a reconciliation looks at: one batch, or a period [from, to) (ISO 8601). */
export type ReportScope = { batch: string } | { from: string; to: string };

/** The columns a row's result shows as the pipeline keeps them (PipelineRow). */
type ResultColumns =
  | 'transaction_id' | 'phase' | 'outcome' | 'outcome_detail' | 'state' | 'state_reason' | 'state_reason_code'
  | 'input_amount' | 'input_currency' | 'output_amount' | 'output_currency' | 'funded_at' | 'settled_at' | 'may_cancel' | 'cancels_sent' | 'cancel_accepted_at';

export interface ResultRow extends Pick<PipelineRow, ResultColumns> {
  line: number;
  external_id: string | null;
  errors: string | null;
  /** The recipient's name as sent; null for a row that was not valid. */
  recipient_name: string | null;
  /** A correction: the batch and line of the row it pays again. */
  original_batch: string | null;
  original_line: number | null;
  /** An invalid row's fields as read (JSON), for its amount, currency and name. */
  invalid_fields?: string | null;
  /** Its batch's time (rejected or settled, else received): the time of a row never sent. */
  batch_time?: string | null;
}

/** One row as paybatch's own ledger knows it: its result, with when and how money moved. */
export interface LedgerRow extends ResultRow, Pick<PipelineRow, 'batch_id' | 'refunded_amount' | 'created_at' | 'paid_at' | 'refunded_at' | 'observed_at'> {}

/** When a batch was released (ISO 8601), and the MAC over it that only this deployment's service secret makes. */
export interface ReleaseSeal {
  at: string;
  seal: string;
}

/** An audit entry about a row, written with the change it records. */
export interface RowAudit {
  action: string;
  at: string;
  actor?: string;
  details: Record<string, unknown>;
}
