/**
 * Taking a file in: claimed from inbox/ by an atomic rename (so two takers never
 * both get it), fingerprinted by SHA-256, refused if the same content was
 * already taken (unless forced), validated row by row into the store, then
 * accepted or rejected per the policy. Nothing is sent from here, and nothing is
 * ever deleted: a refused or rejected file goes to failed/ with a report beside it.
 */
import { rename, stat, writeFile } from 'node:fs/promises';
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
  const sha256 = (await fileSha256(claimed)) ?? '';
  const earlier = await deps.store.acceptedBatchWithContent(sha256);
  if (earlier && !deps.force) {
    await rename(claimed, failedPath);
    const noteFile = `${failedPath}.duplicate.txt`;
    await writeFile(noteFile, `${name} was not taken: it has the same content (SHA-256 ${sha256}) as batch ${earlier.id}, taken from ${earlier.file_name} at ${earlier.received_at}.\nNothing of it was sent. To take it all the same, run again with --force.\n`);
    return { kind: 'duplicate', file: failedPath, noteFile, earlier };
  }

  const { size } = await stat(claimed);
  const batch = await deps.store.beginBatch({ file_name: name, sha256, size_bytes: size, policy: deps.policy, received_at: new Date(at).toISOString() });
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
