/**
 * A batch that ends at its release (its approval rejected, expired or not
 * verifying) sent nothing, and its file is done with: it goes from processing/
 * to failed/ with a report saying why, never back to the inbox, where it would
 * be taken again as a new batch and asked to be approved again.
 */
import { join } from 'node:path';
import type { BatchRecord } from '../store/port.js';
import type { Workspace } from '../workspace/workspace.js';
import { writeFileSafely } from '../workspace/safe-files.js';
import { moveWithCompanions } from './intake.js';
import { claimName } from './claim-names.js';

/** The approval states in which a batch ended at release (approval-gate.ts end and hold). */
const ENDED_APPROVALS: ReadonlySet<string> = new Set(['rejected', 'expired', 'held']);

/** True when the batch ended at its release, by its approval: its file is not to be taken again. */
export function endedAtRelease(batch: BatchRecord): boolean {
  return batch.status === 'rejected' && ENDED_APPROVALS.has(batch.approval ?? '');
}

/**
 * Moves the batch's claimed file to failed/, with its companions and a report; the path in failed/, or null when
 * the file is not in this workspace's processing/ (moved already, or on another worker's disk: that worker sets it
 * aside when it next looks at its processing/).
 */
export async function setAsideEndedFile(workspace: Workspace, batch: BatchRecord, reason: string): Promise<string | null> {
  const name = claimName(batch.file_name, Date.parse(batch.received_at));
  const failed = join(workspace.folders.failed, name);
  const moved = await moveWithCompanions(join(workspace.folders.processing, name), failed, workspace.home).then(() => true, (error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
    return false;
  });
  if (!moved) return null;
  await writeFileSafely(workspace.home, `${failed}.report.txt`, `${batch.file_name}: batch ${batch.id} ended before anything of it was sent: ${reason}.\nNothing of this file was sent. To pay it, drop it in the inbox again: it is taken as a new batch.\n`);
  return failed;
}
