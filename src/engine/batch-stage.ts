/**
 * Where a batch is, in words a person reads: one pure function names its stage
 * from stored facts (the batch record, its rows' counts by where they are, the
 * soonest next read, the approvals signed), and `status`, `run`, the console and
 * notifications all print it. A batch awaiting approval, rejected, or not yet
 * released is never "in flight", and a row never sent is never counted so: only
 * rows whose transaction exists at the service are (AT_SERVICE_PHASES).
 *
 * The stages, in the order they are decided: being taken in; rejected (at
 * intake, or by an approver, or expired); awaiting approval (by whom); held for
 * a person; waiting for its file to be seen unchanged once more (until when);
 * in flight at the service (next read at); sending; not sent yet; settled.
 */
import type { BatchProgress, BatchRecord } from '../store/port.js';

export type BatchStage =
  | { kind: 'taking_in' }
  | { kind: 'rejected'; by: 'intake' | 'approver' | 'expiry'; reason: string | null }
  | { kind: 'awaiting_approval'; may_approve: string[]; signed: string[]; expires_at: string | null }
  | { kind: 'held'; reason: string | null; rows: RowsWhere; next_read_at: string | null }
  | { kind: 'waiting_for_file'; until: string }
  | { kind: 'in_flight'; rows: RowsWhere; next_read_at: string | null; oldest_since: string | null }
  | { kind: 'sending'; rows: RowsWhere }
  | { kind: 'not_sent_yet'; rows: RowsWhere }
  | { kind: 'settled'; at: string | null };

export type StageKind = BatchStage['kind'];

/** Where a batch's unsettled rows are. */
export interface RowsWhere {
  not_sent_yet: number;
  sending: number;
  at_service: number;
}

export interface StageFacts {
  batch: Pick<BatchRecord, 'status' | 'reason' | 'settled_at' | 'send_after' | 'released' | 'approval' | 'approval_reason' | 'approval_expires_at'>;
  rows: Pick<BatchProgress, 'not_sent_yet' | 'sending' | 'at_service' | 'oldest_in_flight_at'>;
  /** The soonest scheduled read of a row at the service (ms since the epoch), or null. */
  nextReadAt: number | null;
  /** With approvals on: who may approve it (from the policy, when known) and who signed so far. */
  approvals?: { mayApprove: readonly string[]; signed: readonly string[] };
  now: number;
}

/**
 * Whether anything of the batch can still move without a person first: a batch awaiting approval, rejected, settled
 * or held with nothing at the service waits on someone (or on nothing), and `run` need not wait for it.
 */
export function canMoveOnItsOwn(stage: BatchStage): boolean {
  if (stage.kind === 'rejected' || stage.kind === 'awaiting_approval' || stage.kind === 'settled') return false;
  if (stage.kind === 'held') return stage.rows.at_service + stage.rows.sending > 0;
  return true;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function batchStage(facts: StageFacts): BatchStage {
  const { batch, now } = facts;
  const rows: RowsWhere = { not_sent_yet: facts.rows.not_sent_yet, sending: facts.rows.sending, at_service: facts.rows.at_service };
  const moving = rows.at_service + rows.sending;
  if (batch.status === 'intake') return { kind: 'taking_in' };
  if (batch.status === 'rejected') return { kind: 'rejected', by: 'intake', reason: batch.reason };
  // Rejected or expired before anything of it left: whatever rows still say ready, none of them will be sent.
  if ((batch.approval === 'rejected' || batch.approval === 'expired') && moving === 0) {
    return { kind: 'rejected', by: batch.approval === 'rejected' ? 'approver' : 'expiry', reason: batch.approval_reason };
  }
  if (batch.status === 'settled') return { kind: 'settled', at: batch.settled_at };
  if (batch.approval === 'awaiting') {
    return { kind: 'awaiting_approval', may_approve: [...(facts.approvals?.mayApprove ?? [])], signed: [...(facts.approvals?.signed ?? [])], expires_at: batch.approval_expires_at };
  }
  if (batch.approval === 'held') return { kind: 'held', reason: batch.approval_reason, rows, next_read_at: iso(facts.nextReadAt) };
  if (batch.released !== 1 && moving === 0 && now < batch.send_after) return { kind: 'waiting_for_file', until: iso(batch.send_after) as string };
  if (rows.at_service > 0) return { kind: 'in_flight', rows, next_read_at: iso(facts.nextReadAt), oldest_since: facts.rows.oldest_in_flight_at };
  if (rows.sending > 0) return { kind: 'sending', rows };
  if (rows.not_sent_yet > 0) return { kind: 'not_sent_yet', rows };
  return { kind: 'settled', at: batch.settled_at };
}

/** 12:04:31, the machine's local time: what a person compares with the clock on the wall. */
export function clockTime(at: string | number): string {
  const d = new Date(at);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** The rows not at the service yet, as a tail to another stage's words. */
function alsoWaiting(rows: RowsWhere): string {
  const parts = [
    ...(rows.sending > 0 ? [`${rows.sending} being sent`] : []),
    ...(rows.not_sent_yet > 0 ? [`${rows.not_sent_yet} not sent yet`] : []),
  ];
  return parts.length > 0 ? `; ${parts.join(', ')}` : '';
}

const nextRead = (at: string | null): string => (at === null ? '' : `, next read at ${clockTime(at)}`);

/** The stage in one line, for `status`, `run`, the console and notifications. */
export function stageWords(stage: BatchStage): string {
  switch (stage.kind) {
    case 'taking_in': return 'being taken in: its file is being read and checked';
    case 'rejected': {
      const who = stage.by === 'intake' ? 'rejected at intake' : stage.by === 'approver' ? 'rejected' : 'rejected: its approval expired';
      return `${who}${stage.reason ? ` (${stage.reason})` : ''}; nothing of it was sent`;
    }
    case 'awaiting_approval': {
      const by = stage.may_approve.length > 0 ? ` by ${stage.may_approve.join(' or ')}` : '';
      const signed = stage.signed.length > 0 ? ` (signed so far: ${stage.signed.join(', ')})` : '';
      const expires = stage.expires_at ? `; the request expires ${stage.expires_at}` : '';
      return `awaiting approval${by}${signed}: nothing is sent before it${expires}`;
    }
    case 'held': return `held for a person${stage.reason ? ` (${stage.reason})` : ''}${stage.rows.at_service > 0 ? `; ${plural(stage.rows.at_service, 'row', 'rows')} in flight at the service${nextRead(stage.next_read_at)}` : ''}`;
    case 'waiting_for_file': return `waiting until ${clockTime(stage.until)} to see its file unchanged once more before anything is sent`;
    case 'in_flight': return `${plural(stage.rows.at_service, 'row', 'rows')} in flight at the service${nextRead(stage.next_read_at)}${alsoWaiting(stage.rows)}`;
    case 'sending': return `sending ${plural(stage.rows.sending, 'row', 'rows')}${stage.rows.not_sent_yet > 0 ? `; ${stage.rows.not_sent_yet} not sent yet` : ''}`;
    case 'not_sent_yet': return `${plural(stage.rows.not_sent_yet, 'row', 'rows')} not sent yet`;
    case 'settled': return 'all final';
  }
}
