/**
 * The engine's log: every event as a JSON line (pino) in the workspace, and a
 * short human line on standard error for the events a person follows. Fields are
 * chosen by the engine: ids, states, amounts; never the API secret or an
 * account number.
 */
import { join } from 'node:path';
import pino from 'pino';
import type { PipelineLog } from './pipeline.js';

const HUMAN: ReadonlySet<string> = new Set([
  'intake_accepted', 'intake_rejected', 'intake_unreadable', 'intake_duplicate', 'intake_not_read', 'intake_gone', 'intake_failed', 'intake_waiting', 'intake_interrupted',
  'balance_exhausted', 'batch_settled', 'corridor_inactive',
  'webhooks_synced', 'webhooks_not_synced', 'webhook_held_elsewhere', 'webhook_refused', 'inbox_file_ignored', 'schedule_ran', 'sender_stopped', 'watch_loop_error',
]);

export function engineLog(home: string, human: (line: string) => void): { log: PipelineLog; close(): void } {
  const destination = pino.destination({ dest: join(home, 'paybatch.log'), sync: true, mkdir: true });
  const logger = pino({ base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, destination);
  return {
    log(event, fields) {
      logger.info({ event, ...fields });
      if (HUMAN.has(event)) human(`${event.replace(/_/g, ' ')}: ${Object.entries(fields).map(([k, v]) => `${k} ${String(v)}`).join(', ')}`);
    },
    close() {
      destination.flushSync();
    },
  };
}
