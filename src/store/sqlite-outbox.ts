/**
 * The SQLite store's console sign-ins (ConsoleStore) and notification outbox
 * (NotificationStore): the same contract as PostgreSQL's (test/store/contract.ts).
 */
import type { SqliteDatabase } from './database.js';
import { SqlitePipeline } from './sqlite-pipeline.js';
import type { ConsoleCredential, ConsoleStore, NotificationRecord, NotificationStore } from './store.js';

export class SqliteOutbox extends SqlitePipeline implements ConsoleStore, NotificationStore {
  protected constructor(db: SqliteDatabase) {
    super(db);
  }

  async addConsoleCredential(c: Omit<ConsoleCredential, 'used_at'>): Promise<void> {
    this.sql('INSERT INTO console_credentials (hash, kind, person, created_at, expires_at) VALUES (@hash, @kind, @person, @created_at, @expires_at)').run(c);
  }

  async consoleCredential(hash: string, now: number): Promise<ConsoleCredential | undefined> {
    return this.sql("SELECT * FROM console_credentials WHERE hash = ? AND expires_at > ? AND (kind = 'session' OR used_at IS NULL)").get(hash, now) as ConsoleCredential | undefined;
  }

  async useConsoleCode(hash: string, now: number): Promise<boolean> {
    return this.sql("UPDATE console_credentials SET used_at = ? WHERE hash = ? AND kind = 'code' AND used_at IS NULL AND expires_at > ?").run(now, hash, now).changes === 1;
  }

  async deleteConsoleCredential(hash: string): Promise<void> {
    this.sql('DELETE FROM console_credentials WHERE hash = ?').run(hash);
  }

  async enqueueNotification(n: Pick<NotificationRecord, 'channel' | 'event' | 'dedupe_key' | 'payload' | 'created_at'>): Promise<boolean> {
    return this.sql(`INSERT INTO notifications (channel, event, dedupe_key, payload, created_at, next_attempt_at)
      VALUES (@channel, @event, @dedupe_key, @payload, @created_at, @created_at) ON CONFLICT (channel, dedupe_key) DO NOTHING`).run(n).changes === 1;
  }

  async claimDueNotifications(now: number, claimUntil: number, limit: number): Promise<NotificationRecord[]> {
    return this.atomic(() => {
      const due = this.sql(`SELECT * FROM notifications WHERE delivered_at IS NULL AND given_up_at IS NULL AND next_attempt_at <= ?
        ORDER BY next_attempt_at, id LIMIT ?`).all(now, limit) as NotificationRecord[];
      const claim = this.sql('UPDATE notifications SET next_attempt_at = ? WHERE id = ?');
      for (const n of due) claim.run(claimUntil, n.id);
      return due;
    });
  }

  async markNotificationDelivered(id: number, at: number): Promise<void> {
    this.sql('UPDATE notifications SET delivered_at = ?, attempts = attempts + 1, last_error = NULL WHERE id = ?').run(at, id);
  }

  async markNotificationFailed(id: number, error: string, nextAttemptAt: number | null, at: number): Promise<void> {
    if (nextAttemptAt === null) this.sql('UPDATE notifications SET attempts = attempts + 1, last_error = ?, given_up_at = ? WHERE id = ?').run(error, at, id);
    else this.sql('UPDATE notifications SET attempts = attempts + 1, last_error = ?, next_attempt_at = ? WHERE id = ?').run(error, nextAttemptAt, id);
  }

  async notificationCounts(): Promise<Record<string, { waiting: number; delivered: number; given_up: number }>> {
    const rows = this.sql(`SELECT channel, SUM(delivered_at IS NULL AND given_up_at IS NULL) AS waiting, SUM(delivered_at IS NOT NULL) AS delivered,
      SUM(given_up_at IS NOT NULL) AS given_up FROM notifications GROUP BY channel ORDER BY channel`).all() as { channel: string; waiting: number; delivered: number; given_up: number }[];
    return Object.fromEntries(rows.map(({ channel, ...counts }) => [channel, counts]));
  }
}
