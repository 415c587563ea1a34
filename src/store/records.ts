/** The other records the store keeps: webhook deliveries, leases, approvals, console sign-ins, notifications, workers. */
import type { AuditCounts } from '../audit/chain-range.js';

/** A verified webhook delivery [6], [D14]. */
export interface WebhookEvent {
  id: number;
  received_at: string;
  nonce: string;
  webhook_id: string | null;
  event_type: string;
  object_id: string | null;
  body: string;
}

export interface WebhookEventCounts {
  received: number;
  pending: number;
  /** Outcome to how many events ended with it. */
  outcomes: Record<string, number>;
}


/** Who holds the workspace: one `run` or `watch` at a time. */
export interface LeaseHolder {
  token: string;
  holder: string;
  pid: number;
  host: string;
  acquired_at: number;
  renewed_at: number;
}


/** An approval or a rejection as kept: the statement and signature are verified by the engine, never trusted. */
export interface ApprovalRecord {
  id: number;
  batch_id: string;
  person: string;
  decision: 'approve' | 'reject';
  statement: string | null;
  signature: string | null;
  reason: string | null;
  at: string;
}


/** A console sign-in code or session, kept as the SHA-256 of its secret. */
export interface ConsoleCredential {
  hash: string;
  kind: 'code' | 'session';
  person: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}


/** A notification waiting to be, or delivered on one channel. */
export interface NotificationRecord {
  id: number;
  channel: string;
  event: string;
  /** One notification per channel and key (a batch settled is told once, whichever worker saw it). */
  dedupe_key: string;
  /** JSON */
  payload: string;
  created_at: number;
  attempts: number;
  next_attempt_at: number;
  delivered_at: number | null;
  given_up_at: number | null;
  last_error: string | null;
}


/** A worker among several sharing one database, as its lease records it. */
export interface WorkerRecord {
  name: string;
  /** This process's own token: a second process under the same name is told apart. */
  token: string;
  host: string;
  pid: number;
  started_at: number;
  renewed_at: number;
  /** ms since the epoch: past it, the worker is taken for dead and what it held goes to the others. */
  expires_at: number;
}

/** The console audit page's filter (store.auditPage). */
export interface AuditPageFilter {
  action?: string;
  batch?: string;
  before?: number;
}

/** The verification kept: entries 1 to `seq` were verified intact at `verified_at`, the last with `hash`. */
export interface AuditCheckpoint {
  seq: number;
  hash: string;
  verified_at: string | null;
  counts: AuditCounts;
}
