/**
 * What a crash (or, with several workers, a dead worker) left of intakes: a
 * batch still in intake is rejected as interrupted and its file goes back to
 * the inbox, with its companions, to be taken in afresh.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileSafely } from '../workspace/safe-files.js';
import { companionOf } from '../workspace/arrival.js';
import type { BatchRecord } from '../store/port.js';
import type { SharedWork } from './shared-work.js';
import type { IntakeDeps } from './intake.js';
import { moveWithCompanions } from './intake.js';
import { claimName, claimedAtOf } from './claim-names.js';
import { restoreKeptFile } from './file-bytes-in-database.js';

/**
 * A batch whose intake never finished (the process died while taking it in) is
 * rejected as interrupted, and its file goes back to the inbox to be taken in
 * afresh. None of its rows could have been sent: rows become sendable only when
 * a batch is accepted, which is the last step of intake. With several workers,
 * only intakes whose taker is dead are recovered (see recoverShared).
 */
export async function recoverInterruptedIntakes(deps: Pick<IntakeDeps, 'workspace' | 'store' | 'shared'> & { knownBatches(): Promise<BatchRecord[]>; atStart?: boolean }): Promise<string[]> {
  if (deps.shared) return recoverShared(deps, deps.shared, deps.atStart ?? true);
  const recovered: string[] = [];
  // A file claimed just before the process died, before its batch was recorded, belongs to no
  // batch: it goes back to the inbox. (The workspace lease, workspace-lease.ts, makes sure no other run is claiming.)
  recovered.push(...(await putBackUnrecorded(deps, () => true)));
  for (const batch of await deps.store.interruptedIntakes()) {
    await deps.store.rejectBatch(batch.id, 'interrupted during intake; the file was put back in the inbox and taken again');
    // Rows it held as possible duplicates give back their external ids too: the file is taken again.
    await deps.store.endHeldDuplicates(batch.id, null, null);
    if (await putBackClaimed(deps, batch)) recovered.push(batch.id);
  }
  return recovered;
}

/** Files in processing/ that no batch knows (claimed by a process that died before recording it), chosen by `old`, moved back to the inbox. */
async function putBackUnrecorded(deps: Pick<IntakeDeps, 'workspace'> & { knownBatches(): Promise<BatchRecord[]> }, old: (claimedAt: number) => boolean): Promise<string[]> {
  const moved: string[] = [];
  const known = new Set((await deps.knownBatches()).map((b) => claimName(b.file_name, Date.parse(b.received_at))));
  const names = await readdir(deps.workspace.folders.processing);
  const present = new Set(names);
  for (const name of names) {
    const owner = companionOf(name);
    // A marker or manifest goes back with its file, not as a file of its own.
    if (known.has(name) || known.has(owner ?? '') || (owner !== null && present.has(owner))) continue;
    const claimedAt = claimedAtOf(name);
    if (claimedAt === null || !old(claimedAt)) continue;
    const original = name.replace(/^\d{4}-\d{2}-\d{2}T[\d-]+Z--/, '');
    const back = join(deps.workspace.folders.inbox, original);
    try {
      await moveWithCompanions(join(deps.workspace.folders.processing, name), existsSync(back) ? join(deps.workspace.folders.inbox, name) : back, deps.workspace.home);
      moved.push(name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error; // another worker sharing the folder put it back first
    }
  }
  return moved;
}

/**
 * Puts an interrupted batch's claimed file back in the inbox, with its marker
 * and manifest (without them a workspace that requires one would wait for it
 * forever); false when the file is not in this workspace's processing/.
 */
async function putBackClaimed(deps: Pick<IntakeDeps, 'workspace'>, batch: BatchRecord): Promise<boolean> {
  const claimed = join(deps.workspace.folders.processing, claimName(batch.file_name, Date.parse(batch.received_at)));
  const back = join(deps.workspace.folders.inbox, batch.file_name);
  const target = existsSync(back) ? join(deps.workspace.folders.inbox, `${batch.id}--${batch.file_name}`) : back;
  try {
    await moveWithCompanions(claimed, target, deps.workspace.home);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error; // moved to failed/ before the crash, or on another machine
    return false;
  }
}

/**
 * Several workers: an intake is recovered only once its taker is dead (its
 * lease expired) or is this worker in an earlier life, and by one worker only
 * (the rejection is a compare-and-set). The file goes back to this worker's
 * inbox: moved, when it is in this workspace; else written from the bytes kept
 * in the database. A file claimed but not recorded is put back only once it has
 * lain in processing/ for store.unrecorded_file_ms, and a lease at least (a
 * live worker records its batch once the file is hashed: seconds, even for the
 * largest file; the folder may be shared, so its claimer is not known). Its own
 * intakes count only at its start (`atStart`): later, they are running.
 */
async function recoverShared(deps: Pick<IntakeDeps, 'workspace' | 'store'> & { knownBatches(): Promise<BatchRecord[]> }, shared: SharedWork, atStart: boolean): Promise<string[]> {
  const now = shared.clock.now();
  const recovered = await putBackUnrecorded(deps, (claimedAt) => now - claimedAt > Math.max(shared.leaseMs, shared.unrecordedFileMs));
  for (const batch of await shared.store.orphanedIntakes(shared.name, now, atStart)) {
    if (!(await deps.store.rejectBatch(batch.id, `interrupted during intake (worker ${batch.taken_by ?? 'unknown'} stopped); the file was put back in the inbox and taken again`))) continue;
    await deps.store.endHeldDuplicates(batch.id, null, null);
    if (await putBackClaimed(deps, batch)) {
      recovered.push(batch.id);
      continue;
    }
    const back = join(deps.workspace.folders.inbox, batch.file_name);
    const target = existsSync(back) ? join(deps.workspace.folders.inbox, `${batch.id}--${batch.file_name}`) : back;
    // Bytes cut short (the taker died while keeping them) are not a file to take: the original stays where it arrived.
    // With its manifest, if it came with one (checked again when it is taken), before its marker: a file that shows
    // itself complete is taken at once.
    if (!(await restoreKeptFile(shared.store, batch.id, batch.sha256, deps.workspace.home, target))) continue;
    // Whole (their hash is the batch's): marked so, as the claimed file was complete, for a workspace that requires a
    // marker.
    await writeFileSafely(deps.workspace.home, `${target}.done`, '');
    recovered.push(batch.id);
  }
  return recovered;
}

