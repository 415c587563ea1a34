/**
 * The notifier's view of its configuration. The schema itself lives in
 * src/config/notifications.ts (the configuration imports nothing above it);
 * here: whether a channel is told about an event, and reading a secret file.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { ChannelConfig, NotificationEvent } from '../config/notifications.js';
import { ConfigError } from '../errors.js';

export { NOTIFICATION_EVENTS, notificationsSchema } from '../config/notifications.js';
export type {
  ChannelConfig, ChatChannelConfig, EmailChannelConfig, NotificationEvent, NotificationsConfig, WebhookChannelConfig,
} from '../config/notifications.js';

/** Whether a channel is told about an event. */
export function subscribes(channel: ChannelConfig, event: NotificationEvent): boolean {
  return channel.events === undefined || channel.events.includes(event);
}

/** A secret read from its file (relative to `baseDir`, by default the working directory): trimmed, and never quoted in an error. */
export function readSecretFile(file: string, what: string, baseDir: string = process.cwd()): string {
  const path = isAbsolute(file) ? file : resolve(baseDir, file);
  let secret: string;
  try {
    secret = readFileSync(path, 'utf8').trim();
  } catch (error) {
    throw new ConfigError(`cannot read ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (!secret) throw new ConfigError(`${what} ${path} is empty`);
  return secret;
}
