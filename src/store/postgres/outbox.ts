/** The notification outbox's claim in PostgreSQL: with SKIP LOCKED, so that of several workers one sends each. */
import type { NotificationRecord } from '../port.js';
import { OUTBOX_SQL } from '../queries/outbox.js';
import type { PgConnection } from './client.js';

export async function claimDueNotifications(c: PgConnection, now: number, claimUntil: number, limit: number): Promise<NotificationRecord[]> {
  const rows = await c.all<NotificationRecord>(`UPDATE notifications SET next_attempt_at = ? WHERE id IN (SELECT id ${OUTBOX_SQL.due} FOR UPDATE SKIP LOCKED)
    RETURNING *`, [claimUntil, now, limit]);
  return rows.sort((a, b) => a.id - b.id);
}
