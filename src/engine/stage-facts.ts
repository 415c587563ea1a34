/**
 * The I/O edge of batch-stage.ts: reads a batch's stored facts (its rows' counts
 * by where they are, the soonest next read, the approvals signed) and names its
 * stage. No call to the service: `status` runs it beside `watch`.
 */
import type { ApprovalPolicy } from '../approvals/verify.js';
import { canApprove } from '../approvals/verify.js';
import type { ApprovalStore, BatchProgress, BatchRecord, PipelineStore } from '../store/port.js';
import type { BatchStage } from './batch-stage.js';
import { batchStage } from './batch-stage.js';

export type StageStore = Pick<PipelineStore, 'progress' | 'nextReads'> & Partial<Pick<ApprovalStore, 'approvalsOf'>>;

/** Who may approve a batch of the inbox under the policy: approvers and admins, never its submitter. */
export function mayApprove(policy: ApprovalPolicy | undefined): string[] {
  if (!policy) return [];
  return [...policy.people.values()].filter((p) => canApprove(p, policy.inboxSubmitter)).map((p) => p.name).sort();
}

export async function readBatchStage(store: StageStore, record: BatchRecord, now: number, approvers: readonly string[] = []): Promise<{ stage: BatchStage; progress: BatchProgress }> {
  const progress = await store.progress(record.id);
  const [soonest] = progress.at_service > 0 ? await store.nextReads(record.id, 1) : [];
  const signed = record.approval === 'awaiting' && store.approvalsOf
    ? [...new Set((await store.approvalsOf(record.id)).filter((a) => a.decision === 'approve').map((a) => a.person))]
    : [];
  const stage = batchStage({
    batch: record, rows: progress, nextReadAt: soonest?.next_read_at ?? null, now,
    approvals: { mayApprove: approvers.filter((name) => !signed.includes(name)), signed },
  });
  return { stage, progress };
}
