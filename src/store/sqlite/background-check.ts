/**
 * SQLite's quick check of the whole database, on a worker thread with a
 * connection of its own. It reads every page: 0.7 to 1.3 s on a million-row
 * database, which `run` spent before its first call after a restart. Beside
 * the work, a restart is not slowed by the size of what is stored, and a
 * damaged database is still found at every start: `run` stops with exit 65 as
 * soon as it is known (and never ends as if all were well before the check
 * has answered), `watch` takes no more work.
 *
 * What is done meanwhile (a second or two) is recorded as always: after a
 * backup is restored, rows sent meanwhile are sent again under the same
 * external_id, which the service refuses [D6], and the existing transaction is
 * adopted: nothing is paid twice.
 *
 * A check the worker could not make (the thread refused, an error of its own)
 * is made here instead, on this thread: the check is never skipped. But a
 * session that ends early (the service refused our credentials, say) stops it:
 * its answer is then neither reported nor made here, and the session ends once
 * its thread has.
 */
import { Worker } from 'node:worker_threads';
import { DatabaseUnusable, DiskError, asDiskError } from '../../errors.js';
import type { PaybatchError } from '../../errors.js';
import { workerScript } from '../../worker-script.js';
import { heapSettings } from '../../heap.js';
import { RESTORE_HINT, damagedMessage, isDamage, quickCheckFile } from './database.js';

/** What the worker answers: the problems found, or why it could not look. */
export type CheckAnswer = { problems: string[] } | { failed: { code?: string; message: string } };

/** What is wrong with the database (exit 65 damaged, 74 unreadable); null when it is sound; 'stopped' when stopped before it answered. */
export type CheckFinding = PaybatchError | null | 'stopped';

export interface BackgroundCheck {
  found: Promise<CheckFinding>;
  /**
   * Stops a check that has not answered: `found` is then 'stopped'. Resolves
   * once its thread has ended by itself, its pass done (about a second on a
   * million rows): a thread ended from outside while SQLite's pass is under way
   * takes the whole process down when that pass ends in an error, as it does on
   * a damaged database (V8's fatal "ToLocalChecked Empty MaybeLocal", exit 134).
   */
  stop(): Promise<void>;
}

/** The check, started on a worker thread; `script` for tests. */
export function checkDatabaseInBackground(file: string, script = workerScript(import.meta.url, 'quick-check-worker.js')): BackgroundCheck {
  let answered = false;
  let settle: (finding: CheckFinding) => void = () => {};
  const found = new Promise<CheckFinding>((resolve) => (settle = resolve));
  const answer = (reply: CheckAnswer): void => {
    if (answered) return;
    answered = true;
    settle('problems' in reply ? verdict(file, reply.problems) : checkHere(file, reply.failed.message));
  };
  let ended: Promise<void> = Promise.resolve();
  try {
    // Small heap limits: it holds a page or two at a time; SQLite's cache is outside them.
    const worker = new Worker(script, { workerData: { file, heap: heapSettings() }, resourceLimits: { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 16 } });
    worker.on('message', answer);
    worker.on('error', (error) => answer({ failed: { message: error.message } }));
    ended = new Promise((resolve) => worker.once('exit', (code) => {
      answer({ failed: { message: `it ended without an answer (exit code ${code})` } });
      resolve();
    }));
  } catch (error) {
    answer({ failed: { message: (error as Error).message } });
  }
  return {
    found,
    async stop() {
      if (!answered) {
        // Answered first: its thread's end is then not taken for a failed check (nor checked again here).
        answered = true;
        settle('stopped');
      }
      // Never terminated (see BackgroundCheck.stop): the process ends only once the thread has.
      await ended;
    },
  };
}

function verdict(file: string, problems: readonly string[]): PaybatchError | null {
  return problems.length > 0 ? new DatabaseUnusable(damagedMessage(file, problems)) : null;
}

/** The same check on this thread, its connection of its own: holds the event loop for its second or two. */
function checkHere(file: string, why: string): PaybatchError | null {
  process.stderr.write(`paybatch: warning: the database's check on a thread of its own failed (${why}); checking it here\n`);
  try {
    return verdict(file, quickCheckFile(file));
  } catch (error) {
    return unchecked(file, error);
  }
}

/** A check that failed: damage, a disk that refused the reads, or a database that cannot be checked at all. */
export function unchecked(file: string, error: unknown): PaybatchError {
  if (isDamage(error)) return new DatabaseUnusable(damagedMessage(file, [(error as Error).message]));
  const disk = asDiskError(error);
  if (disk instanceof DiskError) return new DiskError(`the database ${file} could not be read whole (${(error as { code?: string }).code}): ${RESTORE_HINT}`, { cause: error });
  return new DatabaseUnusable(`the database ${file} could not be checked (${(error as Error).message}): ${RESTORE_HINT}`, { cause: error });
}
