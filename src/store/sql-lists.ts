/** SQL text shared by both databases. */

/** A list of phases as an SQL literal list, for queries built once (the phases are paybatch's own constants, never input). */
export const phaseList = (phases: readonly string[]): string => `(${phases.map((p) => `'${p}'`).join(', ')})`;

/** The columns of a pipeline row (PipelineRow), in both databases. */
export const PIPELINE_COLUMNS = `batch_id, line, external_id, request, phase, outcome, outcome_detail, transaction_id, state, state_reason, state_reason_code,
  input_amount, input_currency, output_amount, output_currency, refunded_amount, created_at, funded_at, paid_at, refunded_at, settled_at,
  observed_at, heard_at, reads, next_read_at, fund_attempts, revision, original_batch, original_line`;

/** The columns of a row as the intake port gives it (RowRecord), in both databases. */
export const ROW_RECORD_COLUMNS = 'batch_id, line, external_id, phase, outcome, errors, request, outcome_detail, state, state_reason, state_reason_code, invalid_fields, original_batch, original_line';

/**
 * The columns of a row of the result file (ResultRow), in both databases. A row never sent (invalid, refused, not
 * sent) is given its batch's time (rejected or settled, else received) as `batch_time`, and an invalid row its
 * fields as read, so that its result still names its amount, currency and recipient.
 */
export const RESULT_ROW_COLUMNS = `line, external_id, transaction_id, phase, outcome, outcome_detail, state, state_reason, state_reason_code,
  input_amount, input_currency, output_amount, output_currency, funded_at, errors, recipient_name, settled_at, original_batch, original_line, invalid_fields,
  (SELECT COALESCE(b.settled_at, b.received_at) FROM batches b WHERE b.id = rows.batch_id) AS batch_time`;
