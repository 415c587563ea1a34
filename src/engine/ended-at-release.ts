/**
 * A batch that ends at its release (its approval rejected, expired or not
 * verifying) sent nothing, and its file is done with: it goes from processing/
 * to failed/ with a report saying why, never back to the inbox, where it would
 * be taken again as a new batch and asked to be approved again.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { BatchRecord } from '../store/port.js';
import type { Workspace } from '../workspace/workspace.js';
import { writeFileSafely } from '../workspace/safe-files.js';
import { moveIfPresent } from './claimed-file-moves.js';
import { claimName } from './claim-names.js';

/** The approval states in which a batch ended at release (approval-gate.ts end and hold). */
const ENDED_APPROVALS: ReadonlySet<string> = new Set(['rejected', 'expired', 'held']);

/** True when the batch ended at its release, by its approval: its file is not to be taken again. */
export function endedAtRelease(batch: BatchRecord): boolean {
  return batch.status === 'rejected' && ENDED_APPROVALS.has(batch.approval ?? '');
}

/**
 * Moves the file `claimed` took into processing/ to failed/, with its companions and a report of why `ended` ended
 * (the same batch, or a later copy of the same content that ended at release). The report is written first: a
 * crash between the two leaves the file in processing/, set aside again at the next start, never a file in failed/
 * without its report. The path in failed/, or null when the file is not in this workspace's processing/ (moved
 * already, or on another worker's disk: that worker sets it aside when it next looks at its processing/).
 */
export async function setAsideEndedFile(workspace: Workspace, claimed: BatchRecord, ended: BatchRecord = claimed): Promise<string | null> {
  const name = claimName(claimed.file_name, Date.parse(claimed.received_at));
  const from = join(workspace.folders.processing, name);
  if (!existsSync(from)) return null;
  const failed = join(workspace.folders.failed, name);
  const copy = claimed.id === ended.id ? '' : ` This copy was claimed for batch ${claimed.id} (${claimed.reason ?? 'no reason recorded'}), whose file was taken in again as batch ${ended.id}.`;
  await writeFileSafely(workspace.home, `${failed}.report.txt`, `${claimed.file_name}: batch ${ended.id} ended before anything of it was sent: ${ended.reason ?? 'its approval ended'}.${copy}\nNothing of this file was sent. To pay it, drop it in the inbox again: it is taken as a new batch.\n`);
  return (await moveIfPresent(from, failed, workspace.home)) ? failed : null;
}
