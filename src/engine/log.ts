/**
 * The engine's log: every event as a JSON line (pino) in the workspace, and a
 * short human line on standard error for the events a person follows. Fields are
 * chosen by the engine: ids, states, amounts; never the API secret or an
 * account number.
 */
import { join } from 'node:path';
import pino from 'pino';
import { DiskError, ExitCode, asDiskError } from '../errors.js';
import { openLogSafely } from '../workspace/safe-files.js';
import { printableName } from '../workspace/arrival.js';
import type { PipelineLog } from './pipeline.js';

const HUMAN: ReadonlySet<string> = new Set([
  'intake_accepted', 'intake_rejected', 'intake_unreadable', 'intake_duplicate', 'intake_not_read', 'intake_gone', 'intake_failed', 'intake_waiting', 'intake_interrupted', 'intake_copy_archived', 'ended_file_set_aside', 'scratch_in_memory',
  'balance_exhausted', 'batch_settled', 'corridor_inactive', 'answer_mismatch', 'fund_refused', 'insufficient_funds', 'limit_refused',
  'retry_after_capped', 'catch_up_reads', 'row_busy', 'row_attention', 'cancel_sent_again', 'cancel_given_up', 'database_unhealthy', 'approval_requested', 'approval_held', 'intake_withdrawn', 'intake_changed', 'archived_file_changed',
  'webhooks_synced', 'webhooks_not_synced', 'webhook_held_elsewhere', 'webhook_refused', 'inbox_file_ignored', 'schedule_ran', 'sender_stopped', 'watch_loop_error',
  'pain002_written', 'pain002_not_written',
]);

/**
 * A log that cannot be written (a full disk) ends the process at once with its
 * own exit code and one line: carrying on without a log would hide what was
 * paid. Nothing is lost: every step is in the database, and the next start
 * carries on from it.
 */
function stopOnDiskError(error: unknown): never {
  const failure = asDiskError(error);
  const message = failure instanceof DiskError ? failure.message : `the log cannot be written: ${(error as Error).message}`;
  process.stderr.write(`paybatch: ${message}\n`);
  process.exit(ExitCode.ioError);
}

export function engineLog(home: string, human: (line: string) => void): { log: PipelineLog; close(): void } {
  // Never through a link: a paybatch.log planted as a link elsewhere is refused, not followed.
  const destination = pino.destination({ fd: openLogSafely(home, join(home, 'paybatch.log')), sync: true });
  destination.on('error', stopOnDiskError);
  const logger = pino({ base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, destination);
  return {
    log(event, fields) {
      try {
        logger.info({ event, ...fields });
      } catch (error) {
        stopOnDiskError(error);
      }
      // Control characters escaped: a file's name holding a newline must not forge a line here.
      if (HUMAN.has(event)) human(`${event.replace(/_/g, ' ')}: ${Object.entries(fields).map(([k, v]) => `${k} ${printableName(typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v))}`).join(', ')}`);
    },
    close() {
      try {
        destination.flushSync();
      } catch (error) {
        stopOnDiskError(error);
      }
    },
  };
}
