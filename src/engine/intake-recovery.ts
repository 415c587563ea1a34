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
import type { BatchRecord, IntakeStore, PipelineStore } from '../store/port.js';
import type { SharedWork } from './shared-work.js';
import type { IntakeDeps } from './intake.js';
import { inboxSpot, moveIfPresent, putBackIfPresent } from './claimed-file-moves.js';
import { claimName, claimedAtOf } from './claim-names.js';
import { restoreKeptFile } from './file-bytes-in-database.js';
import { fileSha256 } from '../batch/file-hash.js';
import { endedAtRelease, setAsideEndedFile } from './ended-at-release.js';

/**
 * A batch whose intake never finished (the process died while taking it in) is
 * rejected as interrupted, and its file goes back to the inbox to be taken in
 * afresh. None of its rows could have been sent: rows become sendable only when
 * a batch is accepted, which is the last step of intake. With several workers,
 * only intakes whose taker is dead are recovered (see recoverShared).
 */
export async function recoverInterruptedIntakes(deps: RecoveryDeps & Pick<IntakeDeps, 'shared'> & { atStart?: boolean }): Promise<string[]> {
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

type RecoveryStore = IntakeDeps['store'] & Pick<PipelineStore, 'recentBatches'> & Pick<IntakeStore, 'batchesInProcessing'>;

interface RecoveryDeps extends Pick<IntakeDeps, 'workspace'> {
  store: RecoveryStore;
  /** The batches whose files are, or may be, in processing/ (being taken in, or accepted). */
  knownBatches(): Promise<BatchRecord[]>;
  /** Where a copy archived as paid by another batch is said (intake_copy_archived). */
  log?: (event: string, fields: Record<string, unknown>) => void;
}

/** What becomes of a file in processing/ that no batch being taken in or accepted claims (see strayClaim). */
type StrayClaim = { kind: 'put_back' } | { kind: 'leave' } | { kind: 'archive' } | { kind: 'ended'; own: BatchRecord; ended: BatchRecord } | { kind: 'paid_as'; own: BatchRecord; again: BatchRecord };

/**
 * A file in processing/ that no batch in intake or accepted claims: claimed by a process that died before recording
 * it (put back: no batch knows it), or whose batch has ended. Its batch is the one of its claim (name and time) and of
 * its content: two files of one name claimed in the same millisecond by two workers are not taken for each other.
 * - Its batch settled (by another worker, this one down): archived.
 * - Its batch rejected (its intake interrupted and recovered meanwhile by another worker, which wrote the file again
 *   from the bytes kept and took it in again; or ended at release) while a batch of the same content is accepted or
 *   settled: archived with a note naming the batch that pays it. Put back, it would be taken in twice; in failed/, its
 *   report would ask for it to be dropped in again, and paid twice.
 * - Its batch ended at release (its approval rejected, expired or not verifying; the process died before the file
 *   was moved): set aside in failed/ with a report.
 * - While one of the same content is still being taken in (it may yet fail): left, and looked at again later.
 * - A later copy of the same content (its intake taken over by another worker) ended at release: set aside in
 *   failed/ with that batch's report, not put back to be approved again.
 * - Else put back.
 */
async function strayClaim(store: RecoveryStore, path: string, name: string, claimedAt: number): Promise<StrayClaim> {
  const receivedAt = new Date(claimedAt).toISOString();
  const since = await store.recentBatches(receivedAt);
  const own = since.find((b) => b.received_at === receivedAt && claimName(b.file_name, claimedAt) === name);
  if (!own || (await fileSha256(path)) !== own.sha256) return { kind: 'put_back' };
  if (own.status === 'settled') return { kind: 'archive' };
  if (own.status !== 'rejected') return { kind: 'put_back' };
  const again = await store.acceptedBatchWithContent(own.sha256);
  if (again) return { kind: 'paid_as', own, again };
  if (endedAtRelease(own)) return { kind: 'ended', own, ended: own };
  const open = await store.batchesInProcessing();
  if (open.some((b) => b.id !== own.id && b.sha256 === own.sha256 && b.status === 'intake')) return { kind: 'leave' };
  const ended = await store.endedBatchWithContent(own.sha256, own.received_at);
  return ended ? { kind: 'ended', own, ended } : { kind: 'put_back' };
}

/**
 * Files in processing/ that no batch being taken in or accepted claims, chosen by `old`: moved back to the inbox,
 * archived or set aside (strayClaim). Returns those put back.
 */
async function putBackUnrecorded(deps: RecoveryDeps, old: (claimedAt: number) => boolean): Promise<string[]> {
  const moved: string[] = [];
  const known = new Set((await deps.knownBatches()).map((b) => claimName(b.file_name, Date.parse(b.received_at))));
  const names = await readdir(deps.workspace.folders.processing);
  const present = new Set(names);
  const { folders, home } = deps.workspace;
  for (const name of names) {
    const owner = companionOf(name);
    // A marker or manifest goes back with its file, not as a file of its own.
    if (known.has(name) || known.has(owner ?? '') || (owner !== null && present.has(owner))) continue;
    const claimedAt = claimedAtOf(name);
    if (claimedAt === null || !old(claimedAt)) continue;
    const stray = await strayClaim(deps.store, join(folders.processing, name), name, claimedAt);
    if (stray.kind === 'leave') continue;
    if (stray.kind === 'archive') {
      // Not there: archived by another worker sharing the folder.
      await moveIfPresent(join(folders.processing, name), join(folders.archive, name), home);
      continue;
    }
    if (stray.kind === 'ended') {
      // Moved by another worker sharing the folder first: said by that one.
      const failed = await setAsideEndedFile(deps.workspace, stray.own, stray.ended);
      if (failed) deps.log?.('ended_file_set_aside', { file: failed, batch: stray.own.id, ended: stray.ended.id, report: `${failed}.report.txt` });
      continue;
    }
    if (stray.kind === 'paid_as') {
      const note = join(folders.archive, `${name}.note.txt`);
      // The note first: a crash between the two leaves the file in processing/, archived again at the next start.
      await writeFileSafely(home, note, `${stray.own.file_name}: its batch ${stray.own.id} was rejected (${stray.own.reason ?? 'no reason recorded'}); the same content is batch ${stray.again.id}, ${stray.again.status}, which pays the file.\nNothing of this copy was sent; it was archived, not put back (that would take the file in twice).\n`);
      // Moved by another worker sharing the folder first: said by that one.
      if (!(await moveIfPresent(join(folders.processing, name), join(folders.archive, name), home))) continue;
      deps.log?.('intake_copy_archived', { file: join(folders.archive, name), batch: stray.own.id, paid_as: stray.again.id, note });
      continue;
    }
    const original = name.replace(/^\d{4}-\d{2}-\d{2}T[\d-]+Z--/, '');
    const back = join(deps.workspace.folders.inbox, original);
    // Not there: another worker sharing the folder put it back first.
    if (await moveIfPresent(join(deps.workspace.folders.processing, name), existsSync(back) ? join(deps.workspace.folders.inbox, name) : back, deps.workspace.home)) moved.push(name);
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
  // Not there: moved to failed/ before the crash, or on another machine.
  return putBackIfPresent(claimed, batch.file_name, batch.id, deps.workspace);
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
async function recoverShared(deps: RecoveryDeps, shared: SharedWork, atStart: boolean): Promise<string[]> {
  const now = shared.clock.now();
  const recovered = await putBackUnrecorded(deps, (claimedAt) => now - claimedAt > Math.max(shared.leaseMs, shared.unrecordedFileMs));
  for (const batch of await shared.store.orphanedIntakes(shared.name, now, atStart)) {
    if (!(await deps.store.rejectBatch(batch.id, `interrupted during intake (worker ${batch.taken_by ?? 'unknown'} stopped); the file was put back in the inbox and taken again`))) continue;
    await deps.store.endHeldDuplicates(batch.id, null, null);
    if (await putBackClaimed(deps, batch)) {
      recovered.push(batch.id);
      continue;
    }
    const target = inboxSpot(batch.file_name, batch.id, deps.workspace);
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

