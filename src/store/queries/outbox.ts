/**
 * Console sign-ins (ConsoleStore) and the notification outbox
 * (NotificationStore), the same in both databases; claiming due notifications
 * is each database's own (sqlite/outbox.ts, postgres/outbox.ts).
 */
import type { ConsoleCredential, NotificationRecord } from '../port.js';
import type { SqlConnection } from './connection.js';

export const OUTBOX_SQL = {
  /** Params: now, limit. */
  due: 'FROM notifications WHERE delivered_at IS NULL AND given_up_at IS NULL AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?',
};

export async function addConsoleCredential(c: SqlConnection, credential: Omit<ConsoleCredential, 'used_at'>): Promise<void> {
  await c.run('INSERT INTO console_credentials (hash, kind, person, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
    [credential.hash, credential.kind, credential.person, credential.created_at, credential.expires_at]);
}

export async function consoleCredential(c: SqlConnection, hash: string, now: number): Promise<ConsoleCredential | undefined> {
  return c.first<ConsoleCredential>("SELECT * FROM console_credentials WHERE hash = ? AND expires_at > ? AND (kind = 'session' OR used_at IS NULL)", [hash, now]);
}

export async function useConsoleCode(c: SqlConnection, hash: string, now: number): Promise<boolean> {
  return (await c.run("UPDATE console_credentials SET used_at = ? WHERE hash = ? AND kind = 'code' AND used_at IS NULL AND expires_at > ?", [now, hash, now])) === 1;
}

export async function deleteConsoleCredential(c: SqlConnection, hash: string): Promise<void> {
  await c.run('DELETE FROM console_credentials WHERE hash = ?', [hash]);
}

export async function enqueueNotification(c: SqlConnection, n: Pick<NotificationRecord, 'channel' | 'event' | 'dedupe_key' | 'payload' | 'created_at'>): Promise<boolean> {
  return (await c.run(`INSERT INTO notifications (channel, event, dedupe_key, payload, created_at, next_attempt_at)
    VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (channel, dedupe_key) DO NOTHING`, [n.channel, n.event, n.dedupe_key, n.payload, n.created_at, n.created_at])) === 1;
}

export async function markNotificationDelivered(c: SqlConnection, id: number, at: number): Promise<void> {
  await c.run('UPDATE notifications SET delivered_at = ?, attempts = attempts + 1, last_error = NULL WHERE id = ?', [at, id]);
}

export async function markNotificationFailed(c: SqlConnection, id: number, error: string, nextAttemptAt: number | null, at: number): Promise<void> {
  if (nextAttemptAt === null) await c.run('UPDATE notifications SET attempts = attempts + 1, last_error = ?, given_up_at = ? WHERE id = ?', [error, at, id]);
  else await c.run('UPDATE notifications SET attempts = attempts + 1, last_error = ?, next_attempt_at = ? WHERE id = ?', [error, nextAttemptAt, id]);
}

export async function notificationCounts(c: SqlConnection): Promise<Record<string, { waiting: number; delivered: number; given_up: number }>> {
  const rows = await c.all<{ channel: string; waiting: number; delivered: number; given_up: number }>(`SELECT channel,
      COUNT(*) FILTER (WHERE delivered_at IS NULL AND given_up_at IS NULL) AS waiting,
      COUNT(*) FILTER (WHERE delivered_at IS NOT NULL) AS delivered,
      COUNT(*) FILTER (WHERE given_up_at IS NOT NULL) AS given_up
    FROM notifications GROUP BY channel ORDER BY channel`);
  return Object.fromEntries(rows.map(({ channel, ...counts }) => [channel, counts]));
}
