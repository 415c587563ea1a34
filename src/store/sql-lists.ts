/** SQL text shared by both databases. */

/** A list of phases as an SQL literal list, for queries built once (the phases are paybatch's own constants, never input). */
export const phaseList = (phases: readonly string[]): string => `(${phases.map((p) => `'${p}'`).join(', ')})`;

/** The columns of a pipeline row (PipelineRow), in both databases. */
export const PIPELINE_COLUMNS = `batch_id, line, external_id, request, phase, outcome, outcome_detail, transaction_id, state, state_reason, state_reason_code,
  input_amount, input_currency, output_amount, output_currency, refunded_amount, created_at, funded_at, paid_at, refunded_at, settled_at,
  observed_at, heard_at, reads, next_read_at, fund_attempts, revision, original_batch, original_line`;

/** The columns of a row as the intake port gives it (RowRecord), in both databases. */
export const ROW_RECORD_COLUMNS = 'batch_id, line, external_id, phase, outcome, errors, request, outcome_detail, state, state_reason, state_reason_code, invalid_fields, original_batch, original_line';
