/**
 * The PostgreSQL store's console sign-ins (ConsoleStore) and notification
 * outbox (NotificationStore): the same contract as SQLite's. Due notifications
 * are claimed with SKIP LOCKED, so that of several workers one sends each.
 */
import type pg from 'pg';
import { PgSharedWork } from './shared-work.js';
import type { ConsoleCredential, ConsoleStore, NotificationRecord, NotificationStore } from '../store.js';

export class PgOutbox extends PgSharedWork implements ConsoleStore, NotificationStore {
  protected constructor(pool: pg.Pool) {
    super(pool);
  }

  async addConsoleCredential(c: Omit<ConsoleCredential, 'used_at'>): Promise<void> {
    await this.run('INSERT INTO console_credentials (hash, kind, person, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)', [c.hash, c.kind, c.person, c.created_at, c.expires_at]);
  }

  async consoleCredential(hash: string, now: number): Promise<ConsoleCredential | undefined> {
    return this.first<ConsoleCredential>("SELECT * FROM console_credentials WHERE hash = $1 AND expires_at > $2 AND (kind = 'session' OR used_at IS NULL)", [hash, now]);
  }

  async useConsoleCode(hash: string, now: number): Promise<boolean> {
    return (await this.run("UPDATE console_credentials SET used_at = $1 WHERE hash = $2 AND kind = 'code' AND used_at IS NULL AND expires_at > $1", [now, hash])) === 1;
  }

  async deleteConsoleCredential(hash: string): Promise<void> {
    await this.run('DELETE FROM console_credentials WHERE hash = $1', [hash]);
  }

  async enqueueNotification(n: Pick<NotificationRecord, 'channel' | 'event' | 'dedupe_key' | 'payload' | 'created_at'>): Promise<boolean> {
    return (await this.run(`INSERT INTO notifications (channel, event, dedupe_key, payload, created_at, next_attempt_at)
      VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (channel, dedupe_key) DO NOTHING`, [n.channel, n.event, n.dedupe_key, n.payload, n.created_at])) === 1;
  }

  async claimDueNotifications(now: number, claimUntil: number, limit: number): Promise<NotificationRecord[]> {
    const rows = await this.all<NotificationRecord>(`UPDATE notifications SET next_attempt_at = $2 WHERE id IN (
        SELECT id FROM notifications WHERE delivered_at IS NULL AND given_up_at IS NULL AND next_attempt_at <= $1
        ORDER BY next_attempt_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
      RETURNING *`, [now, claimUntil, limit]);
    return rows.sort((a, b) => a.id - b.id);
  }

  async markNotificationDelivered(id: number, at: number): Promise<void> {
    await this.run('UPDATE notifications SET delivered_at = $1, attempts = attempts + 1, last_error = NULL WHERE id = $2', [at, id]);
  }

  async markNotificationFailed(id: number, error: string, nextAttemptAt: number | null, at: number): Promise<void> {
    if (nextAttemptAt === null) await this.run('UPDATE notifications SET attempts = attempts + 1, last_error = $1, given_up_at = $2 WHERE id = $3', [error, at, id]);
    else await this.run('UPDATE notifications SET attempts = attempts + 1, last_error = $1, next_attempt_at = $2 WHERE id = $3', [error, nextAttemptAt, id]);
  }

  async notificationCounts(): Promise<Record<string, { waiting: number; delivered: number; given_up: number }>> {
    const rows = await this.all<{ channel: string; waiting: number; delivered: number; given_up: number }>(`SELECT channel,
        (COUNT(*) FILTER (WHERE delivered_at IS NULL AND given_up_at IS NULL))::int AS waiting,
        (COUNT(*) FILTER (WHERE delivered_at IS NOT NULL))::int AS delivered,
        (COUNT(*) FILTER (WHERE given_up_at IS NOT NULL))::int AS given_up
      FROM notifications GROUP BY channel ORDER BY channel`);
    return Object.fromEntries(rows.map(({ channel, ...counts }) => [channel, counts]));
  }
}
