/** The notification outbox's claim in SQLite: one process per workspace, so a transaction is enough. */
import type { NotificationRecord } from '../port.js';
import { OUTBOX_SQL } from '../queries/outbox.js';
import type { SqliteConnection } from './connection.js';

export async function claimDueNotifications(c: SqliteConnection, now: number, claimUntil: number, limit: number): Promise<NotificationRecord[]> {
  return c.atomic(() => {
    const due = c.sql(`SELECT * ${OUTBOX_SQL.due}`).all(now, limit) as NotificationRecord[];
    const claim = c.sql('UPDATE notifications SET next_attempt_at = ? WHERE id = ?');
    for (const n of due) claim.run(claimUntil, n.id);
    return due;
  });
}
