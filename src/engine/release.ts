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
import type { BatchRecord, IntakeStore } from '../store/store.js';
import type { Workspace } from '../workspace/workspace.js';
import { changedSince, claimName, putBack } from './intake.js';

export type Release =
  | { kind: 'released' }
  | { kind: 'wait'; untilMs: number }
  | { kind: 'withdrawn'; reason: string };

export async function releaseBatch(batch: BatchRecord, deps: { workspace: Workspace; store: IntakeStore; clock: Clock }): Promise<Release> {
  if (batch.released === 1) return { kind: 'released' };
  if (deps.clock.now() < batch.send_after) return { kind: 'wait', untilMs: batch.send_after };
  const claimed = `${deps.workspace.folders.processing}/${claimName(batch.file_name, Date.parse(batch.received_at))}`;
  if (await changedSince(claimed, { size: batch.size_bytes, mtimeMs: batch.file_mtime_ms ?? 0 })) {
    const reason = 'it changed after it was taken in (still being written): put back in the inbox to be taken once whole, nothing of it sent';
    if (await deps.store.withdrawBatch(batch.id, reason)) {
      await putBack(claimed, batch.file_name, batch.id, deps).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
      return { kind: 'withdrawn', reason };
    }
  }
  await deps.store.releaseBatch(batch.id);
  return { kind: 'released' };
}
