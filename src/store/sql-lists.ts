/**
 * SQL text shared by both databases: column lists, and every list of phases or
 * reasons a statement names, generated from the vocabulary in
 * src/payout-states.ts (never written out here), so that SQL and code cannot
 * disagree on which phases are which.
 */
import { AT_SERVICE_PHASES, BEFORE_SENDING_PHASES, FOLLOWED_PHASES, NEVER_SENT_PHASES, NOT_SENT_YET_PHASES, REASONS, SENDING_PHASES, SETTLED_PHASES, UNSETTLED_PHASES, WAITING_FOR_SENDER } from '../payout-states.js';
import { REFUSAL_OUTCOMES } from '../payout-states.js';
import type { BatchStatus } from './rows.js';

/** A list of phases (or states, or reasons) as an SQL literal list, for queries built once (paybatch's own constants, never input). */
export const phaseList = (phases: Iterable<string>): string => `(${[...phases].map((p) => `'${p}'`).join(', ')})`;

/** A single phase or reason as an SQL literal (a constant of paybatch's, never input). */
export const literal = (value: string): string => `'${value}'`;

/** Phases of rows never sent, which never will be (their external_id free for another batch). */
export const NEVER_SENT = phaseList(NEVER_SENT_PHASES);
/**
 * Phases of rows that were never to be sent: never sent, and not the rows that
 * were to be sent but ended before (not_sent, the one never-sent phase that
 * follows ready).
 */
const NOT_SENDABLE_PHASES = NEVER_SENT_PHASES.filter((phase) => phase !== 'not_sent');
export const NOT_SENDABLE = phaseList(NOT_SENDABLE_PHASES);
export const BEFORE_SENDING = phaseList(BEFORE_SENDING_PHASES);
/** Ready, or never to be sent: rows of a batch none of which has gone to the service. */
export const NOTHING_SENT = phaseList(['ready', ...NEVER_SENT_PHASES]);
export const UNSETTLED = phaseList(UNSETTLED_PHASES);
export const NOT_SENT_YET = phaseList(NOT_SENT_YET_PHASES);
export const SENDING = phaseList(SENDING_PHASES);
export const AT_SERVICE = phaseList(AT_SERVICE_PHASES);
/** Sendable rows whose part is over: ended without being sent, final or held (neither unsettled nor never to be sent). */
export const SETTLED = phaseList(SETTLED_PHASES);
export const FOLLOWED = phaseList(FOLLOWED_PHASES);
/** Held rows and those paybatch is still working on: where an attention state can be. */
export const HELD_OR_UNSETTLED = phaseList(['held', ...UNSETTLED_PHASES]);
export const WAITING_ON_SENDER = phaseList(WAITING_FOR_SENDER);
/** Outcomes of rows refused by a limit or by the service's funding: a reconciliation of a period shows them. */
export const REFUSALS = phaseList(REFUSAL_OUTCOMES);
export const EXTERNAL_ID_USED = literal(REASONS.externalIdAlreadyUsed);

/** Batch statuses, typed: the compiler refuses one a batch cannot have. */
const statusList = (statuses: readonly BatchStatus[]): string => phaseList(statuses);
/** Batches whose file is, or may still be, in processing/: taken in, or being taken in. */
export const IN_PROCESSING = statusList(['intake', 'accepted']);
/** Batches accepted once (settled ones included): their content is not taken again. */
export const ACCEPTED_ONCE = statusList(['accepted', 'settled']);

/** The columns of a pipeline row (PipelineRow), in both databases. */
export const PIPELINE_COLUMNS = `batch_id, line, external_id, request, phase, outcome, outcome_detail, transaction_id, state, state_reason, state_reason_code,
  input_amount, input_currency, output_amount, output_currency, refunded_amount, created_at, funded_at, paid_at, refunded_at, settled_at,
  observed_at, may_cancel, heard_at, reads, next_read_at, fund_attempts, cancels_sent, cancel_sent_at, cancel_accepted_at, revision, original_batch, original_line`;

/** The columns of a row as the intake port gives it (RowRecord), in both databases. */
export const ROW_RECORD_COLUMNS = 'batch_id, line, external_id, phase, outcome, errors, request, outcome_detail, state, state_reason, state_reason_code, invalid_fields, original_batch, original_line';

/**
 * The columns of a row of the result file (ResultRow), in both databases. A row never sent (invalid, refused, not
 * sent) is given its batch's time (rejected or settled, else received) as `batch_time`, and an invalid row its
 * fields as read, so that its result still names its amount, currency and recipient.
 */
export const RESULT_ROW_COLUMNS = `line, external_id, transaction_id, phase, outcome, outcome_detail, state, state_reason, state_reason_code,
  input_amount, input_currency, output_amount, output_currency, funded_at, errors, recipient_name, settled_at, original_batch, original_line, invalid_fields, may_cancel, cancels_sent, cancel_accepted_at,
  (SELECT COALESCE(b.settled_at, b.received_at) FROM batches b WHERE b.id = rows.batch_id) AS batch_time`;
