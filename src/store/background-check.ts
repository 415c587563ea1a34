/**
 * SQLite's quick check of the whole database, on a worker thread with a
 * connection of its own. It reads every page: 0.7 to 1.3 s on a million-row
 * database, which `run` spent before its first call after a restart. Beside
 * the work, a restart is not slowed by the size of what is stored, and a
 * damaged database is still found at every start: `run` stops with exit 65 as
 * soon as it is known (and never ends as if all were well before the check
 * has answered), `watch` takes no more work.
 *
 * Damage the work runs into meanwhile is SQLite's own error on the page it
 * reads, handled as before.
 */
import { Worker } from 'node:worker_threads';
import { workerScript } from '../worker-script.js';
import { damagedMessage } from './database.js';

/** Resolves with what is wrong with the database, said with what to do, or null when it is sound. */
export function checkDatabaseInBackground(file: string): Promise<string | null> {
  return new Promise((resolve) => {
    let answered = false;
    const answer = (problem: string | null): void => {
      if (answered) return;
      answered = true;
      resolve(problem);
    };
    // Small heap limits: it holds a page or two at a time; SQLite's cache is outside them.
    const worker = new Worker(workerScript(import.meta.url, 'quick-check-worker.js'), { workerData: { file }, resourceLimits: { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 16 } });
    worker.on('message', (message: { problems: string[] }) => answer(message.problems.length > 0 ? damagedMessage(file, message.problems) : null));
    // A check that could not run is said, and does not stop the work: the database answered everything else.
    worker.on('error', (error) => {
      process.stderr.write(`paybatch: warning: the database's quick check could not run: ${error.message}\n`);
      answer(null);
    });
    worker.on('exit', (code) => {
      if (!answered) process.stderr.write(`paybatch: warning: the database's quick check ended without an answer (exit code ${code})\n`);
      answer(null);
    });
  });
}
