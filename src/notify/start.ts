/**
 * Notifications around a `run` or a `watch`: the configured channels opened,
 * the notifier fed by the engine's log, its delivery loop started; stopped and
 * closed, within a bound, when the command ends.
 */
import type { Clock } from '../clock.js';
import type { PipelineLog } from '../engine/pipeline.js';
import { openChannels } from './channels/index.js';
import type { NotificationsConfig } from './config.js';
import type { NotifierStore } from './notifier.js';
import { Notifier, notifyingLog } from './notifier.js';

/** At the end of a command, what is due gets this long to go out; the rest waits in the outbox for the next start. */
export const STOP_GRACE_MS = 1_000;

export interface RunningNotifications {
  /** The engine's log, feeding the notifier. */
  log: PipelineLog;
  notifier: Notifier;
  /** Never takes much more than STOP_GRACE_MS: a receiver that hangs does not hold the shutdown. */
  stop(): Promise<void>;
}

/** Null when no channel is configured: nothing is queued, nothing sent. A secret file that cannot be read is a ConfigError. */
export function startNotifications(config: NotificationsConfig, store: NotifierStore, log: PipelineLog, clock: Clock, baseDir?: string): RunningNotifications | null {
  if (Object.keys(config.channels).length === 0) return null;
  const channels = openChannels(config, baseDir);
  const notifier = new Notifier({ store, config, senders: channels.senders, clock, log, secrets: channels.secrets });
  notifier.start();
  return {
    log: notifyingLog(log, notifier),
    notifier,
    async stop() {
      await notifier.stop(STOP_GRACE_MS);
      // Closing waits for nothing that matters any more: bounded like the rest.
      await Promise.race([channels.close().catch(() => {}), new Promise((resolve) => setTimeout(resolve, 250).unref())]);
    },
  };
}
