/**
 * Taking a file in: claimed from inbox/ by an atomic rename (so two takers never
 * both get it), fingerprinted by SHA-256, refused if the same content was
 * already taken (unless forced), validated row by row into the store, then
 * accepted or rejected per the policy. Nothing is sent from here, and nothing is
 * ever deleted: a refused or rejected file goes to failed/ with a report beside it.
 */
import { checkCorrections } from './correction-intake.js';
import { constants, existsSync } from 'node:fs';
import { lstat, open, readFile, readdir, rename } from 'node:fs/promises';
import { moveSafely, writeFileSafely } from '../workspace/safe-files.js';
import { basename, dirname, join } from 'node:path';
import type { Clock } from '../clock.js';
import type { BatchConfig, IntakeConfig } from '../config/config.js';
import type { Readiness, Seen } from '../workspace/arrival.js';
import { companionNames, companionOf, continued, readiness } from '../workspace/arrival.js';
import type { Manifest } from '../batch/manifest.js';
import { compareWithManifest, parseManifest } from '../batch/manifest.js';
import { readerOptions, ruleOptions } from '../batch/batch-options.js';
import { BatchFileError } from '../batch/file-error.js';
import { fileSha256 } from '../batch/file-hash.js';
import type { ValidationReport } from '../batch/validate-file.js';
import { validateFile } from '../batch/validate-file.js';
import { renderReport } from '../reports/validation-report.js';
import type { BatchRecord, IntakePolicy, IntakeStore, NewRow, PipelineStore } from '../store/store.js';
import type { Workspace } from '../workspace/workspace.js';
import type { SharedWork } from './shared-work.js';
import type { PipelineLog } from './pipeline.js';
import { keepFileBytes, keepManifest, restoreKeptFile } from './kept-files.js';

export type IntakeOutcome =
  | { kind: 'accepted'; batch: string; file: string; ready: number; refused: number; invalid: number; report: ValidationReport }
  | { kind: 'rejected'; batch: string; file: string; reportFile: string; report: ValidationReport }
  | { kind: 'unreadable'; batch: string; file: string; reportFile: string; error: BatchFileError }
  | { kind: 'duplicate'; file: string; noteFile: string; earlier: BatchRecord }
  | { kind: 'not_read'; file: string; reportFile: string; reason: string }
  /** Not complete yet (still being written, or waiting for its marker or manifest): left in the inbox; `seen` is for the next look. */
  | { kind: 'waiting'; name: string; reason: string; retryInMs: number; seen: Seen }
  /** It changed while it was being taken in (still being written): put back in the inbox, nothing of it sent. */
  | { kind: 'changed'; batch: string; name: string; reason: string }
  | { kind: 'gone'; name: string };

export interface IntakeDeps {
  workspace: Workspace;
  store: IntakeStore & Pick<PipelineStore, 'row'>;
  batch: BatchConfig;
  policy: IntakePolicy;
  clock: Clock;
  /** When a file is complete: stability, marker, manifest. */
  intake: IntakeConfig;
  /** The stability interval, when the caller has its own (watch.stable_ms); intake.stable_ms otherwise. */
  stableMs?: number;
  /** Take a file even when the same content was taken before. */
  force?: boolean;
  /** With approvals on: who submits files of the inbox, and how long an approval request lasts. */
  approval?: { submitter: string; expiresAfterMs: number };
  /** With several workers on PostgreSQL: the batch records its taker, and the file's bytes are kept in the database. */
  shared?: SharedWork | null;
  /** Where intake says what a person should know that is not the file's fault (the scratch file refused). */
  log?: PipelineLog;
}

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

/** The first of `names` in `folder` that is a regular file (a link is not a companion), or null. */
async function firstFile(folder: string, names: readonly string[]): Promise<string | null> {
  for (const name of names) {
    const entry = await lstat(join(folder, name)).catch(() => null);
    if (entry?.isFile()) return join(folder, name);
  }
  return null;
}

/** A zip's end record: its signature, then 18 bytes and a comment of the length it gives (the last field). */
const ZIP_END = Buffer.from([0x50, 0x4b, 0x05, 0x06]);
const ZIP_END_MIN = 22;
const ZIP_END_MAX = ZIP_END_MIN + 0xffff;

/** Whether the end of `tail` (the last bytes of a file) is a whole zip end record: a spreadsheet written to its end. */
export function endsWithZipEnd(tail: Buffer): boolean {
  for (let at = tail.length - ZIP_END_MIN; at >= 0; at -= 1) {
    if (tail[at] === 0x50 && tail.subarray(at, at + 4).equals(ZIP_END)) return at + ZIP_END_MIN + tail.readUInt16LE(at + 20) === tail.length;
  }
  return false;
}

/**
 * Whether the file ends whole: a text file's last byte is a line end (a stall in
 * the middle of a field leaves a line without one); a spreadsheet (.xlsx, a zip)
 * ends with its end record, which a writer puts last.
 */
/** The end of a pain.001 is looked for in its last bytes: the closing tag, and whitespace after it. */
const XML_END_MAX = 256;

async function endsWithLineEnd(path: string, size: number): Promise<boolean> {
  if (size === 0) return true;
  const spreadsheet = /\.xlsx$/i.test(path);
  const xml = /\.xml$/i.test(path);
  const length = spreadsheet ? Math.min(size, ZIP_END_MAX) : xml ? Math.min(size, XML_END_MAX) : 1;
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const tail = Buffer.alloc(length);
    await handle.read(tail, 0, length, size - length);
    // A pain.001 is whole once its root element is closed (a writer may leave no line end after it).
    if (xml) return /<\/([A-Za-z_][\w.-]*:)?Document>\s*$/.test(tail.toString('latin1'));
    return spreadsheet ? endsWithZipEnd(tail) : tail[0] === 0x0a || tail[0] === 0x0d;
  } finally {
    await handle.close();
  }
}

/**
 * Looks at a file in the inbox: whether it is complete (see workspace/arrival.ts),
 * and its marker and manifest if it has them. Null when it is gone. A link or a
 * folder counts as ready: it is refused unread when taken.
 */
export async function lookAtInboxFile(path: string, deps: Pick<IntakeDeps, 'intake' | 'stableMs' | 'clock'>, before?: Seen): Promise<{ readiness: Readiness; seen: Seen; marker: string | null; manifest: string | null } | null> {
  const entry = await lstat(path).catch(() => null);
  if (!entry) return null;
  if (!entry.isFile()) {
    const seen = { size: entry.size, mtimeMs: entry.mtimeMs, endsWithLineEnd: true, marker: false, manifest: false, since: deps.clock.now() };
    return { readiness: { ready: true, by: 'stable' }, seen, marker: null, manifest: null };
  }
  const folder = dirname(path);
  const { markers, manifests } = companionNames(basename(path));
  const marker = deps.intake.marker === 'off' ? null : await firstFile(folder, markers);
  const manifest = deps.intake.manifest === 'off' ? null : await firstFile(folder, manifests);
  const lineEnd = await endsWithLineEnd(path, entry.size).catch(() => true);
  const seen = continued({ size: entry.size, mtimeMs: entry.mtimeMs, endsWithLineEnd: lineEnd, marker: marker !== null, manifest: manifest !== null }, before, deps.clock.now());
  const policy = { stableMs: deps.stableMs ?? deps.intake.stable_ms, marker: deps.intake.marker, manifest: deps.intake.manifest };
  return { readiness: readiness(seen, deps.clock.now(), policy), seen, marker, manifest };
}

/**
 * Rows stored per transaction. While this thread stores a chunk, the workers checking the file wait for their next
 * piece (see parallel-check.ts), and rows waiting for their chunk are copied by every young-generation collection:
 * a million-row intake took 27.5 to 28.4 s at 500 (three runs), 24.8 and 26.0 at 250, 24.6 and 25.4 at 100; at
 * 1,000, 28.8 and 30.1 s in an earlier comparison.
 */
const STORE_CHUNK = 250;

/** A name unique in processing/ and failed/: the time, then the file's own name. */
export function claimName(name: string, at: number): string {
  return `${new Date(at).toISOString().replace(/[:.]/g, '-')}--${name}`;
}

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
  // batch: it goes back to the inbox. (The workspace lock makes sure no other run is claiming.)
  recovered.push(...(await putBackUnrecorded(deps, () => true)));
  for (const batch of await deps.store.interruptedIntakes()) {
    await deps.store.rejectBatch(batch.id, 'interrupted during intake; the file was put back in the inbox and taken again');
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

/** When a file in processing/ was claimed (ms), from its claim name; null for a name paybatch did not give. */
export function claimedAtOf(name: string): number | null {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z--/.exec(name);
  return match ? Date.parse(`${match[1]}T${match[2]}:${match[3]}:${match[4]}.${match[5]}Z`) : null;
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
 * lain in processing/ for UNRECORDED_AFTER_MS (a live worker records its batch
 * once the file is hashed: seconds, even for the largest file). Its own
 * intakes count only at its start (`atStart`): later, they are running.
 */
const UNRECORDED_AFTER_MS = 10 * 60_000;

async function recoverShared(deps: Pick<IntakeDeps, 'workspace' | 'store'> & { knownBatches(): Promise<BatchRecord[]> }, shared: SharedWork, atStart: boolean): Promise<string[]> {
  const now = shared.clock.now();
  const recovered = await putBackUnrecorded(deps, (claimedAt) => now - claimedAt > Math.max(shared.leaseMs, UNRECORDED_AFTER_MS));
  for (const batch of await shared.store.orphanedIntakes(shared.name, now, atStart)) {
    if (!(await deps.store.rejectBatch(batch.id, `interrupted during intake (worker ${batch.taken_by ?? 'unknown'} stopped); the file was put back in the inbox and taken again`))) continue;
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

/** Puts a claimed file (and its companions) back in the inbox under its own name, or under the batch's id when that name is taken again. */
export async function putBack(claimed: string, name: string, batch: string, deps: Pick<IntakeDeps, 'workspace'>): Promise<void> {
  const back = join(deps.workspace.folders.inbox, name);
  await moveWithCompanions(claimed, existsSync(back) ? join(deps.workspace.folders.inbox, `${batch}--${name}`) : back, deps.workspace.home);
}

/**
 * Takes a file of the inbox in, if it is complete. `before` is what the caller
 * saw of it the last time it looked (from a 'waiting' outcome): stability is
 * measured from it. Without it, a file complete by stability alone is only seen,
 * and taken at a later look.
 */
export async function takeFile(inboxPath: string, deps: IntakeDeps, before?: Seen): Promise<IntakeOutcome> {
  const name = basename(inboxPath);
  const look = await lookAtInboxFile(inboxPath, deps, before);
  if (!look) return { kind: 'gone', name };
  if (!look.readiness.ready) return { kind: 'waiting', name, reason: look.readiness.reason, retryInMs: look.readiness.retryInMs, seen: look.seen };
  const at = deps.clock.now();
  const claimed = join(deps.workspace.folders.processing, claimName(name, at));
  try {
    await moveSafely(deps.workspace.home, inboxPath, claimed);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'gone', name };
    throw error;
  }
  // The marker and the manifest go with the file, so that the inbox holds no stale "complete" signal.
  if (look.marker) await rename(look.marker, `${claimed}.done`).catch(() => {});
  if (look.manifest) await rename(look.manifest, `${claimed}.manifest.json`).catch(() => {});
  const failedPath = join(deps.workspace.folders.failed, basename(claimed));
  // Refused before a byte is read: a symbolic link (perhaps to a file outside the workspace), a
  // folder or a device; or a file over the size limit (hashing it alone would take a while).
  const entry = await lstat(claimed);
  const unread = !entry.isFile()
    ? 'it is not a regular file (a symbolic link, a folder or a device), and paybatch reads only files placed in the inbox itself'
    : entry.size > deps.batch.max_file_bytes ? `it is ${entry.size} bytes, over the limit of ${deps.batch.max_file_bytes} bytes (batch.max_file_bytes)` : null;
  if (unread) {
    await moveWithCompanions(claimed, failedPath, deps.workspace.home);
    const reportFile = `${failedPath}.report.txt`;
    await writeFileSafely(deps.workspace.home, reportFile, `${name} was not taken: ${unread}.\nNothing of it was read or sent.\n`);
    return { kind: 'not_read', file: failedPath, reportFile, reason: unread };
  }
  const sha256 = (await fileSha256(claimed)) ?? '';
  const earlier = await deps.store.acceptedBatchWithContent(sha256);
  if (earlier && !deps.force) {
    await moveWithCompanions(claimed, failedPath, deps.workspace.home);
    const noteFile = `${failedPath}.duplicate.txt`;
    await writeFileSafely(deps.workspace.home, noteFile, `${name} was not taken: it has the same content (SHA-256 ${sha256}) as batch ${earlier.id}, taken from ${earlier.file_name} at ${earlier.received_at}.\nNothing of it was sent. To take it all the same, run again with --force.\n`);
    return { kind: 'duplicate', file: failedPath, noteFile, earlier };
  }

  // Complete by a marker or a manifest: sent once accepted. By stability alone: watched for as long again
  // once taken, before anything is sent, so that a writer that only paused shows itself [intake.stable_ms].
  const stableMs = deps.stableMs ?? deps.intake.stable_ms;
  const settled = look.readiness.ready && look.readiness.by !== 'stable';
  const batch = await deps.store.beginBatch({
    file_name: name, sha256, size_bytes: entry.size, policy: deps.policy, received_at: new Date(at).toISOString(),
    file_mtime_ms: Math.floor(entry.mtimeMs), send_after: settled ? at : at + stableMs, taken_by: deps.shared?.name ?? null,
  });
  try {
    // Shared: the bytes go to the database before any row does, so that any worker can take the file in again.
    if (deps.shared && (await keepFileBytes(deps.shared.store, batch, claimed)) !== sha256) return withdraw(claimed, name, batch, deps, 'it changed while it was read');
    if (deps.shared && look.manifest) await keepManifest(deps.shared.store, batch, `${claimed}.manifest.json`);
    let pending: NewRow[] = [];
    const flush = async (): Promise<void> => {
      if (pending.length === 0) return;
      const rows = pending;
      pending = [];
      await deps.store.addRows(batch, rows);
    };
    // What the file holds, for its manifest: every data row, and every amount that could be read.
    const figures = { rows: 0, totals: new Map<string, bigint>() };
    // Rows naming an original to pay again: only then is the file checked as a corrections file.
    let corrections = 0;
    let report: ValidationReport;
    try {
      report = await validateFile(claimed, {
        reader: readerOptions(deps.batch),
        rules: ruleOptions(deps.batch, deps.clock),
        maxReportedIssues: deps.batch.max_reported_issues,
      }, {
        async row(checked) {
          figures.rows += 1;
          if (checked.amount) figures.totals.set(checked.amount.currency, (figures.totals.get(checked.amount.currency) ?? 0n) + checked.amount.minor);
          const origin = checked.origin();
          if (origin !== null && origin !== 'malformed') corrections += 1;
          const malformed = origin === 'malformed'
            ? [{ line: checked.line, column: 'original_line', code: 'original_malformed', message: 'original_batch and original_line name the row a correction pays again: both, a batch id and a line number' }]
            : [];
          // The request as stored: made on the worker thread that checked the row, when one did (no JSON made twice).
          const stored = checked.valid && malformed.length === 0 ? checked.stored() : null;
          pending.push({
            line: checked.line, external_id: checked.externalId, request: null, stored, errors: [...checked.errors, ...malformed],
            original: origin === 'malformed' ? null : origin, fields: stored ? null : checked.fields(),
          });
          if (pending.length >= STORE_CHUNK) await flush();
        },
        async late(finding) {
          if (finding.severity !== 'error') return;
          await flush();
          await deps.store.invalidateRow(batch, finding.line, finding.issue);
        },
        scratchRefused(message) {
          deps.log?.('scratch_in_memory', { batch, file: name, reason: message });
        },
      });
      await flush();
    } catch (error) {
      if (!(error instanceof BatchFileError)) throw error;
      if (await changedSince(claimed, entry)) return withdraw(claimed, name, batch, deps, 'it changed while it was read');
      await deps.store.rejectBatch(batch, `${error.code}: ${error.message}`);
      await moveWithCompanions(claimed, failedPath, deps.workspace.home);
      const reportFile = `${failedPath}.report.txt`;
      const where = error.line === null ? name : `${name}, line ${error.line}`;
      await writeFileSafely(deps.workspace.home, reportFile, `${where}: cannot be read as a batch (${error.code}): ${error.message}\nNothing of it was sent.\n`);
      return { kind: 'unreadable', batch, file: failedPath, reportFile, error };
    }
    // The bytes validated are the bytes kept: a file that changed while it was read (a writer still at it) is not taken.
    if (report.sha256 !== sha256 || (await changedSince(claimed, entry))) return withdraw(claimed, name, batch, deps, 'it changed while it was read');

    const manifestProblem = await checkManifest(`${claimed}.manifest.json`, { rows: figures.rows, totals: figures.totals, sha256 });
    if (manifestProblem) {
      await deps.store.rejectBatch(batch, `the file does not match its manifest: ${manifestProblem.join('; ')}`);
      await moveWithCompanions(claimed, failedPath, deps.workspace.home);
      const reportFile = `${failedPath}.report.txt`;
      await writeFileSafely(deps.workspace.home, reportFile, `${name} does not match its manifest (control totals):\n${manifestProblem.map((d) => `  ${d}`).join('\n')}\nNothing of it was sent. The file, or its manifest, is incomplete or wrong: drop both again once whole.\n`);
      return { kind: 'not_read', file: failedPath, reportFile, reason: `it does not match its manifest: ${manifestProblem.join('; ')}` };
    }

    if (report.invalid > 0 && deps.policy === 'reject_file') {
      await deps.store.rejectBatch(batch, `${report.invalid} invalid rows (policy reject_file)`);
      await moveWithCompanions(claimed, failedPath, deps.workspace.home);
      const reportFile = `${failedPath}.report.txt`;
      await writeFileSafely(deps.workspace.home, reportFile, `${renderReport({ ...report, file: name })}\nNothing of this file was sent (policy reject_file): correct the rows above and drop it again.\n`);
      await writeFileSafely(deps.workspace.home, `${failedPath}.report.json`, `${JSON.stringify({ batch, ...report, file: name }, null, 2)}\n`);
      return { kind: 'rejected', batch, file: failedPath, reportFile, report };
    }
    // A corrections file: each row checked against its original (a refused one stays unpaid, with why). Asked only of
    // one: finding none in the store reads the whole batch (0.3 s at a million rows).
    if (corrections > 0) await checkCorrections(batch, deps.store);
    // Before it is accepted: a crash in between leaves an interrupted intake, never a batch sendable without approval.
    if (deps.approval) await deps.store.requestApproval(batch, deps.approval.submitter, new Date(at + deps.approval.expiresAfterMs).toISOString());
    const counts = await deps.store.acceptBatch(batch);
    if (!counts) {
      // Recovered as interrupted by another worker meanwhile (this one was taken for dead): that worker takes the
      // file in again, so this copy is set aside, not put back: one file, one batch.
      await moveWithCompanions(claimed, failedPath, deps.workspace.home);
      const reportFile = `${failedPath}.report.txt`;
      const reason = 'another worker recovered its intake as interrupted and takes the file in again; this copy was set aside';
      await writeFileSafely(deps.workspace.home, reportFile, `${name}: ${reason}.\nNothing of this copy was sent.\n`);
      return { kind: 'not_read', file: failedPath, reportFile, reason };
    }
    return { kind: 'accepted', batch, file: claimed, ...counts, report };
  } catch (error) {
    // Not the file's fault (those end above as a rejected batch): the batch stays in intake for the next start to
    // recover, and gives back the external ids of its rows stored sendable meanwhile.
    await deps.store.suspendIntake(batch).catch(() => {});
    throw error;
  }
}

/**
 * Takes one file in once it is complete, looking again as long as `until`
 * allows (a file complete by stability alone is taken at the second look).
 */
export async function takeWhenComplete(path: string, deps: IntakeDeps, wait: (ms: number) => Promise<void>, until: number): Promise<IntakeOutcome> {
  let before: Seen | undefined;
  for (;;) {
    const outcome = await takeFile(path, deps, before);
    if (outcome.kind !== 'waiting' || deps.clock.now() + outcome.retryInMs > until) return outcome;
    before = outcome.seen;
    await wait(outcome.retryInMs);
  }
}

/** Whether the file's size or modification time moved since `entry` (or it is gone). */
export async function changedSince(path: string, entry: { size: number; mtimeMs: number }): Promise<boolean> {
  const now = await lstat(path).catch(() => null);
  return !now || !now.isFile() || now.size !== entry.size || Math.floor(now.mtimeMs) !== Math.floor(entry.mtimeMs);
}

/** A file still being written: its batch is rejected (nothing of it sent) and the file put back to be taken once whole. */
async function withdraw(claimed: string, name: string, batch: string, deps: IntakeDeps, why: string): Promise<IntakeOutcome> {
  const reason = `${why}: still being written; put back in the inbox to be taken once whole, nothing of it sent`;
  await deps.store.rejectBatch(batch, reason);
  await putBack(claimed, name, batch, deps);
  return { kind: 'changed', batch, name, reason };
}

/** The differences between a file and its manifest (null when there is no manifest or it matches). */
async function checkManifest(path: string, figures: { rows: number; totals: Map<string, bigint>; sha256: string }): Promise<string[] | null> {
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? null : Promise.reject(error)));
  if (text === null) return null;
  const parsed = parseManifest(text);
  if ('error' in parsed) return [`the manifest cannot be read: ${parsed.error}`];
  const differences = compareWithManifest(parsed.manifest as Manifest, figures);
  return differences.length > 0 ? differences : null;
}
