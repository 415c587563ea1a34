/**
 * Taking a file in: claimed from inbox/ by an atomic rename (so two takers never
 * both get it), fingerprinted by SHA-256, refused if the same content was
 * already taken (unless forced), validated row by row into the store, then
 * accepted or rejected per the policy. Nothing is sent from here, and nothing is
 * ever deleted: a refused or rejected file goes to failed/ with a report beside it.
 */
import { existsSync } from 'node:fs';
import { lstat, readdir, rename, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Clock } from '../clock.js';
import type { BatchConfig } from '../config/config.js';
import { readerOptions, ruleOptions } from '../batch/batch-options.js';
import { BatchFileError } from '../batch/file-error.js';
import { fileSha256 } from '../batch/file-hash.js';
import type { ValidationReport } from '../batch/validate-file.js';
import { validateFile } from '../batch/validate-file.js';
import { renderReport } from '../reports/validation-report.js';
import type { BatchRecord, IntakePolicy, IntakeStore, NewRow } from '../store/store.js';
import type { Workspace } from '../workspace/workspace.js';

export type IntakeOutcome =
  | { kind: 'accepted'; batch: string; file: string; ready: number; refused: number; invalid: number; report: ValidationReport }
  | { kind: 'rejected'; batch: string; file: string; reportFile: string; report: ValidationReport }
  | { kind: 'unreadable'; batch: string; file: string; reportFile: string; error: BatchFileError }
  | { kind: 'duplicate'; file: string; noteFile: string; earlier: BatchRecord }
  | { kind: 'not_read'; file: string; reportFile: string; reason: string }
  | { kind: 'gone'; name: string };

export interface IntakeDeps {
  workspace: Workspace;
  store: IntakeStore;
  batch: BatchConfig;
  policy: IntakePolicy;
  clock: Clock;
  /** Take a file even when the same content was taken before. */
  force?: boolean;
}

const STORE_CHUNK = 1000;

/** A name unique in processing/ and failed/: the time, then the file's own name. */
export function claimName(name: string, at: number): string {
  return `${new Date(at).toISOString().replace(/[:.]/g, '-')}--${name}`;
}

/**
 * A batch whose intake never finished (the process died while taking it in) is
 * rejected as interrupted, and its file goes back to the inbox to be taken in
 * afresh. None of its rows could have been sent: rows become sendable only when
 * a batch is accepted, which is the last step of intake.
 */
export async function recoverInterruptedIntakes(deps: Pick<IntakeDeps, 'workspace' | 'store'> & { knownBatches(): Promise<BatchRecord[]> }): Promise<string[]> {
  const recovered: string[] = [];
  // A file claimed just before the process died, before its batch was recorded, belongs to no
  // batch: it goes back to the inbox. (The workspace lock makes sure no other run is claiming.)
  const known = new Set((await deps.knownBatches()).map((b) => claimName(b.file_name, Date.parse(b.received_at))));
  for (const name of await readdir(deps.workspace.folders.processing)) {
    if (known.has(name)) continue;
    const original = name.replace(/^\d{4}-\d{2}-\d{2}T[\d-]+Z--/, '');
    const back = join(deps.workspace.folders.inbox, original);
    await rename(join(deps.workspace.folders.processing, name), existsSync(back) ? join(deps.workspace.folders.inbox, name) : back);
    recovered.push(name);
  }
  for (const batch of await deps.store.interruptedIntakes()) {
    await deps.store.rejectBatch(batch.id, 'interrupted during intake; the file was put back in the inbox and taken again');
    const claimed = join(deps.workspace.folders.processing, claimName(batch.file_name, Date.parse(batch.received_at)));
    const back = join(deps.workspace.folders.inbox, batch.file_name);
    const target = existsSync(back) ? join(deps.workspace.folders.inbox, `${batch.id}--${batch.file_name}`) : back;
    try {
      await rename(claimed, target);
      recovered.push(batch.id);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error; // moved to failed/ before the crash
    }
  }
  return recovered;
}

export async function takeFile(inboxPath: string, deps: IntakeDeps): Promise<IntakeOutcome> {
  const name = basename(inboxPath);
  const at = deps.clock.now();
  const claimed = join(deps.workspace.folders.processing, claimName(name, at));
  try {
    await rename(inboxPath, claimed);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'gone', name };
    throw error;
  }
  const failedPath = join(deps.workspace.folders.failed, basename(claimed));
  // Refused before a byte is read: a symbolic link (perhaps to a file outside the workspace), a
  // folder or a device; or a file over the size limit (hashing it alone would take a while).
  const entry = await lstat(claimed);
  const unread = !entry.isFile()
    ? 'it is not a regular file (a symbolic link, a folder or a device), and paybatch reads only files placed in the inbox itself'
    : entry.size > deps.batch.max_file_bytes ? `it is ${entry.size} bytes, over the limit of ${deps.batch.max_file_bytes} bytes (batch.max_file_bytes)` : null;
  if (unread) {
    await rename(claimed, failedPath);
    const reportFile = `${failedPath}.report.txt`;
    await writeFile(reportFile, `${name} was not taken: ${unread}.\nNothing of it was read or sent.\n`);
    return { kind: 'not_read', file: failedPath, reportFile, reason: unread };
  }
  const sha256 = (await fileSha256(claimed)) ?? '';
  const earlier = await deps.store.acceptedBatchWithContent(sha256);
  if (earlier && !deps.force) {
    await rename(claimed, failedPath);
    const noteFile = `${failedPath}.duplicate.txt`;
    await writeFile(noteFile, `${name} was not taken: it has the same content (SHA-256 ${sha256}) as batch ${earlier.id}, taken from ${earlier.file_name} at ${earlier.received_at}.\nNothing of it was sent. To take it all the same, run again with --force.\n`);
    return { kind: 'duplicate', file: failedPath, noteFile, earlier };
  }

  const batch = await deps.store.beginBatch({ file_name: name, sha256, size_bytes: entry.size, policy: deps.policy, received_at: new Date(at).toISOString() });
  let pending: NewRow[] = [];
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    const rows = pending;
    pending = [];
    await deps.store.addRows(batch, rows);
  };
  let report: ValidationReport;
  try {
    report = await validateFile(claimed, {
      reader: readerOptions(deps.batch),
      rules: ruleOptions(deps.batch, deps.clock),
      maxReportedIssues: deps.batch.max_reported_issues,
    }, {
      async row(checked) {
        const request = checked.valid ? checked.request() : null;
        pending.push({ line: checked.line, external_id: checked.externalId, request, errors: checked.errors });
        if (pending.length >= STORE_CHUNK) await flush();
      },
      async late(finding) {
        if (finding.severity !== 'error') return;
        await flush();
        await deps.store.invalidateRow(batch, finding.line, finding.issue);
      },
    });
    await flush();
  } catch (error) {
    if (!(error instanceof BatchFileError)) throw error;
    await deps.store.rejectBatch(batch, `${error.code}: ${error.message}`);
    await rename(claimed, failedPath);
    const reportFile = `${failedPath}.report.txt`;
    const where = error.line === null ? name : `${name}, line ${error.line}`;
    await writeFile(reportFile, `${where}: cannot be read as a batch (${error.code}): ${error.message}\nNothing of it was sent.\n`);
    return { kind: 'unreadable', batch, file: failedPath, reportFile, error };
  }

  if (report.invalid > 0 && deps.policy === 'reject_file') {
    await deps.store.rejectBatch(batch, `${report.invalid} invalid rows (policy reject_file)`);
    await rename(claimed, failedPath);
    const reportFile = `${failedPath}.report.txt`;
    await writeFile(reportFile, `${renderReport({ ...report, file: name })}\nNothing of this file was sent (policy reject_file): correct the rows above and drop it again.\n`);
    await writeFile(`${failedPath}.report.json`, `${JSON.stringify({ batch, ...report, file: name }, null, 2)}\n`);
    return { kind: 'rejected', batch, file: failedPath, reportFile, report };
  }
  const counts = await deps.store.acceptBatch(batch);
  return { kind: 'accepted', batch, file: claimed, ...counts, report };
}
