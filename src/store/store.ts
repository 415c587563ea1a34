/**
 * The narrow, asynchronous interface the engine talks to (STYLE 3): it knows
 * nothing of SQLite, so another store (PostgreSQL) can follow without touching
 * the engine. Each method is one atomic operation of the domain.
 */
import type { PayoutRequest } from '../batch/payout-request.js';
import type { Issue } from '../validate/issue.js';

export type BatchStatus = 'intake' | 'accepted' | 'rejected' | 'settled';
export type IntakePolicy = 'reject_file' | 'skip_invalid';

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
}

export interface NewRow {
  line: number;
  external_id: string | null;
  /** The request body of a valid row; null for an invalid one. */
  request: PayoutRequest | null;
  errors: Issue[];
}

export interface RowRecord {
  batch_id: string;
  line: number;
  external_id: string | null;
  phase: string;
  outcome: string | null;
  errors: Issue[];
  request: PayoutRequest | null;
}

export interface IntakeStore {
  /** The accepted batch with this content, if any (a file taken twice is refused). */
  acceptedBatchWithContent(sha256: string): Promise<BatchRecord | undefined>;
  /** Records a new batch being taken in; returns its id, unique even for the same content taken with --force. */
  beginBatch(batch: Pick<BatchRecord, 'file_name' | 'sha256' | 'size_bytes' | 'policy' | 'received_at'>): Promise<string>;
  /** Adds rows as they are read, in one transaction per call. */
  addRows(batchId: string, rows: readonly NewRow[]): Promise<void>;
  /** A finding across rows (a duplicate external_id) made this row invalid after all. */
  invalidateRow(batchId: string, line: number, error: Issue): Promise<void>;
  /** Rejects the batch: nothing of it will be sent. */
  rejectBatch(batchId: string, reason: string): Promise<void>;
  /**
   * Accepts the batch: rows whose external_id an earlier batch already used are
   * refused, the other valid rows become ready to send. Returns the counts.
   */
  acceptBatch(batchId: string): Promise<{ ready: number; refused: number; invalid: number }>;
  batch(id: string): Promise<BatchRecord | undefined>;
  /** The rows of a batch in file order, streamed. */
  rows(batchId: string): AsyncIterable<RowRecord>;
  close(): Promise<void>;
}
