/**
 * Moving a claimed batch file between the workspace's folders, with its
 * companions (its marker NAME.done and its manifest NAME.manifest.json): a
 * file put back without them would wait in a workspace that requires one
 * forever. Shared by intake, release, settling and the recovery at start.
 */
import { existsSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { moveSafely } from '../workspace/safe-files.js';
import type { Workspace } from '../workspace/workspace.js';

/** The companions that travel with a claimed batch file: its marker and its manifest. */
const COMPANION_SUFFIXES = ['.done', '.manifest.json'] as const;

/** Moves a claimed file and its companions (NAME.done, NAME.manifest.json) together. */
export async function moveWithCompanions(from: string, to: string, home: string): Promise<void> {
  await moveSafely(home, from, to);
  for (const suffix of COMPANION_SUFFIXES) {
    await rename(`${from}${suffix}`, `${to}${suffix}`).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
}

/**
 * moveWithCompanions, false instead of an error when the file is not there (moved already: before a crash, or by
 * another worker sharing the folder).
 */
export async function moveIfPresent(from: string, to: string, home: string): Promise<boolean> {
  return moveWithCompanions(from, to, home).then(() => true, (error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
    return false;
  });
}

/** Where a batch's file goes back in the inbox: its own name, or the batch's id before it when that name is taken again. */
export function inboxSpot(name: string, batch: string, workspace: Workspace): string {
  const back = join(workspace.folders.inbox, name);
  return existsSync(back) ? join(workspace.folders.inbox, `${batch}--${name}`) : back;
}

/** Puts a claimed file (and its companions) back in the inbox (inboxSpot); an error when it is not there. */
export async function putBack(claimed: string, name: string, batch: string, workspace: Workspace): Promise<void> {
  await moveWithCompanions(claimed, inboxSpot(name, batch, workspace), workspace.home);
}

/** putBack, false when the file is not there (moved before a crash, or by another worker sharing the folder). */
export async function putBackIfPresent(claimed: string, name: string, batch: string, workspace: Workspace): Promise<boolean> {
  return moveIfPresent(claimed, inboxSpot(name, batch, workspace), workspace.home);
}
