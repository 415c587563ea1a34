/**
 * Before anything of a batch is sent, its file is looked at once more: a file
 * taken as complete by stability alone waits for as long again once taken
 * (`send_after`), and must then still be the file that was validated, size and
 * modification time. A file that changed (a writer that only paused) is taken
 * back: nothing of it was sent, its batch ends rejected, and the file goes back
 * to the inbox to be taken once whole. The rows sent are always the ones
 * validated: they come from the store, never from the file again.
 */
import type { Clock } from '../clock.js';
import type { BatchRecord, DuplicateStore, IntakeStore, PipelineStore } from '../store/port.js';
import type { Workspace } from '../workspace/workspace.js';
import { changedSince, claimName } from './intake.js';
import { putBackIfPresent } from './claimed-file-moves.js';
import type { ApprovalGate } from './approval-gate.js';
import { REASONS } from '../payout-states.js';
import { existsSync } from 'node:fs';
import type { SharedWork } from './shared-work.js';
import { setAsideEndedFile } from './ended-at-release.js';

export type Release =
  | { kind: 'released' }
  | { kind: 'wait'; untilMs: number; reason?: string; on?: 'approval' }
  | { kind: 'withdrawn'; reason: string }
  /** Its approval ended after some of it was sent: nothing more of it is sent, and its rows not sent ended. */
  | { kind: 'held'; reason: string; notSent: number };

/** How often a batch awaiting approval is looked at again. */
const APPROVAL_POLL_MS = 2_000;

/** How often a batch whose taker (another live worker) is to release it is looked at again. */
const TAKER_POLL_MS = 2_000;

export async function releaseBatch(batch: BatchRecord, deps: { workspace: Workspace; store: IntakeStore & Pick<DuplicateStore, 'endHeldDuplicates'> & Pick<PipelineStore, 'endReadyRows'>; clock: Clock; gate?: ApprovalGate; shared?: SharedWork | null }): Promise<Release> {
  // With approvals on, `released` is no shortcut (a column anyone with the database can set): the gate decides from
  // the signatures, and the time now or of the release it sealed.
  const gate = deps.gate?.enabled ? deps.gate : undefined;
  if (batch.released === 1 && !gate) return { kind: 'released' };
  if (batch.released !== 1 && deps.clock.now() < batch.send_after) return { kind: 'wait', untilMs: batch.send_after };
  // Four eyes: nothing is sent before the approvals verify; a rejected, expired or invalid approval ends the batch.
  if (deps.gate) {
    const verdict = await deps.gate.check(batch);
    if (verdict.kind === 'waiting') return { kind: 'wait', untilMs: deps.clock.now() + APPROVAL_POLL_MS, reason: verdict.reason, on: 'approval' };
    if (verdict.kind === 'ended') {
      // Some of it sent already: the gate holds it, and what is not sent ends (see Pipeline.prepare). Rows held as
      // possible duplicates end first: never sent, they must not count as sent.
      await deps.store.endHeldDuplicates(batch.id, verdict.outcome, verdict.reason);
      // Ended with nothing sent: its file is done with (failed/, with a report), not left in processing/ to be
      // put back and taken again at the next start.
      if (await deps.store.withdrawBatch(batch.id, verdict.outcome, verdict.reason)) {
        await setAsideEndedFile(deps.workspace, { ...batch, status: 'rejected', reason: verdict.reason });
        return { kind: 'withdrawn', reason: verdict.reason };
      }
      // Some of it sent: it stays open, and settles as its rows end; what is not sent ends now (as Pipeline.prepare
      // ends it at a start).
      const notSent = await deps.store.endReadyRows(batch.id, verdict.outcome, verdict.reason);
      return { kind: 'held', reason: verdict.reason, notSent };
    }
    if (batch.released === 1) return { kind: 'released' };
  }
  const claimed = `${deps.workspace.folders.processing}/${claimName(batch.file_name, Date.parse(batch.received_at))}`;
  const { shared } = deps;
  if (shared && batch.taken_by && batch.taken_by !== shared.name) {
    // Its file is on its taker's disk: the taker takes the second look while it lives.
    if (await shared.isAlive(batch.taken_by)) return { kind: 'wait', untilMs: deps.clock.now() + TAKER_POLL_MS, reason: `worker ${batch.taken_by} took it in and releases it` };
    // Its taker died: the file it watched cannot be looked at from here. What is sent is what was validated (rows
    // from the store); a file still being written when its taker died comes back whole as a new file, whose rows
    // already sent are refused by their external ids.
    if (!existsSync(claimed)) {
      await deps.store.releaseBatch(batch.id, deps.gate?.seal(batch.id));
      return { kind: 'released' };
    }
  }
  if (await changedSince(claimed, { size: batch.size_bytes, mtimeMs: batch.file_mtime_ms ?? 0 })) {
    const reason = 'it changed after it was taken in (still being written): put back in the inbox to be taken once whole, nothing of it sent';
    await deps.store.endHeldDuplicates(batch.id, REASONS.fileChanged, reason);
    if (await deps.store.withdrawBatch(batch.id, REASONS.fileChanged, reason)) {
      await putBackIfPresent(claimed, batch.file_name, batch.id, deps.workspace);
      return { kind: 'withdrawn', reason };
    }
  }
  await deps.store.releaseBatch(batch.id, deps.gate?.seal(batch.id));
  return { kind: 'released' };
}
