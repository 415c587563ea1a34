/**
 * What to do with a file of the inbox, decided purely from what is known of it
 * (STYLE 1: plan, then apply): wait for it, take it on, or refuse it, with which
 * report beside it in failed/ and whether its batch is rejected. Intake (intake.ts)
 * gathers the facts a step at a time and asks again as it learns more; the
 * first refusal wins, in the order the checks are made: readiness, what the
 * entry is and its size, duplicate content, readable as a batch, its manifest,
 * the invalid-rows policy, and whether another worker took it over meanwhile.
 */
import type { FileErrorCode } from '../batch/file-error.js';
import type { ValidationReport } from '../batch/validate-file.js';
import { renderReport } from '../reports/validation-report.js';
import type { BatchRecord, IntakePolicy } from '../store/port.js';

/** What intake knows of a file so far: a fact not learned yet is absent. */
export interface IntakeFacts {
  /** The file's name in the inbox. */
  name: string;
  readiness?: { ready: true } | { ready: false; reason: string; retryInMs: number };
  /** The claimed entry, seen without following a link. */
  entry?: { regularFile: boolean; size: number };
  maxFileBytes: number;
  sha256?: string;
  /** A batch accepted earlier with the same content, or null when none. */
  earlier?: BatchRecord | null;
  /** Take it even when the same content was taken before. */
  force: boolean;
  /** The batch its rows are stored in, once begun. */
  batch?: string;
  /** It cannot be read as a batch at all. */
  unreadable?: { code: FileErrorCode; message: string; line: number | null };
  /** The differences between the file and its manifest (empty: none, or no manifest). */
  manifestProblems?: readonly string[];
  /** Its rows checked. */
  report?: ValidationReport;
  policy: IntakePolicy;
  /** Its batch was recovered as interrupted by another worker (this one was taken for dead), which takes the file in again. */
  recoveredElsewhere?: boolean;
}

/** A file refused: which outcome, why, the files written beside it in failed/, and the batch's rejection, if it has a batch. */
export interface Refusal {
  kind: 'not_read' | 'duplicate' | 'unreadable' | 'rejected';
  reason: string;
  /** Suffixes added to the file's path in failed/, with their text; the first is the report the outcome names. */
  files: readonly { suffix: string; text: string }[];
  /** Why its batch is rejected (null: no batch, or not this worker's to reject). */
  rejectBatch: string | null;
}

export type IntakePlan =
  | { kind: 'wait'; reason: string; retryInMs: number }
  /** Nothing against it so far: go on (and, once every fact is in, accept it). */
  | { kind: 'take' }
  | { kind: 'refuse'; refusal: Refusal };

const refuse = (refusal: Refusal): IntakePlan => ({ kind: 'refuse', refusal });

/** Refused before a byte is read: a symbolic link, a folder or a device, or a file over the size limit (hashing it alone would take a while). */
function unreadEntry(entry: NonNullable<IntakeFacts['entry']>, maxFileBytes: number): string | null {
  if (!entry.regularFile) return 'it is not a regular file (a symbolic link, a folder or a device), and paybatch reads only files placed in the inbox itself';
  return entry.size > maxFileBytes ? `it is ${entry.size} bytes, over the limit of ${maxFileBytes} bytes (batch.max_file_bytes)` : null;
}

export function planIntake(facts: IntakeFacts): IntakePlan {
  const { name } = facts;
  if (facts.readiness && !facts.readiness.ready) return { kind: 'wait', reason: facts.readiness.reason, retryInMs: facts.readiness.retryInMs };
  const unread = facts.entry ? unreadEntry(facts.entry, facts.maxFileBytes) : null;
  if (unread) return refuse({ kind: 'not_read', reason: unread, rejectBatch: null, files: [{ suffix: '.report.txt', text: `${name} was not taken: ${unread}.\nNothing of it was read or sent.\n` }] });
  if (facts.earlier && !facts.force) {
    const { earlier } = facts;
    return refuse({
      // Found at acceptance (another copy accepted while this one was read), this copy's batch, begun, ends rejected.
      kind: 'duplicate', reason: `the same content as batch ${earlier.id}`, rejectBatch: facts.batch ? `the same content as batch ${earlier.id}, accepted while this copy was read` : null,
      files: [{ suffix: '.duplicate.txt', text: `${name} was not taken: it has the same content (SHA-256 ${facts.sha256 ?? ''}) as batch ${earlier.id}, taken from ${earlier.file_name} at ${earlier.received_at}.\nNothing of it was sent. To take it all the same, run again with --force.\n` }],
    });
  }
  if (facts.unreadable) {
    const { code, message, line } = facts.unreadable;
    const where = line === null ? name : `${name}, line ${line}`;
    return refuse({ kind: 'unreadable', reason: `${code}: ${message}`, rejectBatch: `${code}: ${message}`, files: [{ suffix: '.report.txt', text: `${where}: cannot be read as a batch (${code}): ${message}\nNothing of it was sent.\n` }] });
  }
  if (facts.manifestProblems && facts.manifestProblems.length > 0) {
    const problems = facts.manifestProblems;
    return refuse({
      kind: 'not_read', reason: `it does not match its manifest: ${problems.join('; ')}`, rejectBatch: `the file does not match its manifest: ${problems.join('; ')}`,
      files: [{ suffix: '.report.txt', text: `${name} does not match its manifest (control totals):\n${problems.map((d) => `  ${d}`).join('\n')}\nNothing of it was sent. The file, or its manifest, is incomplete or wrong: drop both again once whole.\n` }],
    });
  }
  if (facts.report && facts.report.invalid > 0 && facts.policy === 'reject_file') {
    const report = { ...facts.report, file: name };
    return refuse({
      kind: 'rejected', reason: `${report.invalid} invalid rows (policy reject_file)`, rejectBatch: `${report.invalid} invalid rows (policy reject_file)`,
      files: [
        { suffix: '.report.txt', text: `${renderReport(report)}\nNothing of this file was sent (policy reject_file): correct the rows above and drop it again.\n` },
        { suffix: '.report.json', text: `${JSON.stringify({ batch: facts.batch, ...report }, null, 2)}\n` },
      ],
    });
  }
  if (facts.recoveredElsewhere) {
    // That worker takes the file in again, so this copy is set aside, not put back: one file, one batch.
    const reason = 'another worker recovered its intake as interrupted and takes the file in again; this copy was set aside';
    return refuse({ kind: 'not_read', reason, rejectBatch: null, files: [{ suffix: '.report.txt', text: `${name}: ${reason}.\nNothing of this copy was sent.\n` }] });
  }
  return { kind: 'take' };
}
