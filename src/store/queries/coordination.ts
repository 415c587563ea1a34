/**
 * What processes coordinate through, the same in both databases: webhook
 * deliveries kept and applied once, schedules run once, and the workspace
 * lease. Taking the lease is each database's own transaction
 * (sqlite/coordination.ts, postgres/coordination.ts), with these statements.
 */
import type { LeaseHolder, WebhookEvent, WebhookEventCounts } from '../port.js';
import type { SqlConnection } from './connection.js';

export const LEASE_SQL = {
  held: 'SELECT token, holder, pid, host, acquired_at, renewed_at FROM workspace_lease WHERE id = 1',
  /** Params: token, holder, pid, host, acquired_at, renewed_at. */
  take: `INSERT INTO workspace_lease (id, token, holder, pid, host, acquired_at, renewed_at) VALUES (1, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (id) DO UPDATE SET token = excluded.token, holder = excluded.holder, pid = excluded.pid, host = excluded.host,
      acquired_at = excluded.acquired_at, renewed_at = excluded.renewed_at`,
};

/** Whether `held` keeps the lease from `me`: another holder, renewed lately, alive. */
export const leaseKept = (held: LeaseHolder | undefined, me: LeaseHolder, isAlive: (holder: LeaseHolder) => boolean, staleAfterMs: number): held is LeaseHolder =>
  held !== undefined && held.token !== me.token && me.renewed_at - held.renewed_at < staleAfterMs && isAlive(held);

export const leaseValues = (me: LeaseHolder): unknown[] => [me.token, me.holder, me.pid, me.host, me.acquired_at, me.renewed_at];

export async function renewLease(c: SqlConnection, token: string, at: number): Promise<boolean> {
  return (await c.run('UPDATE workspace_lease SET renewed_at = ? WHERE id = 1 AND token = ?', [at, token])) === 1;
}

export async function releaseLease(c: SqlConnection, token: string): Promise<void> {
  await c.run('DELETE FROM workspace_lease WHERE id = 1 AND token = ?', [token]);
}

export async function recordWebhookEvent(c: SqlConnection, event: Omit<WebhookEvent, 'id'>): Promise<number | 'replayed'> {
  // The nonce is unique across every worker's receiver: a delivery replayed to another worker is refused there too.
  const inserted = await c.first<{ id: number }>(`INSERT INTO webhook_events (received_at, nonce, webhook_id, event_type, object_id, body)
    VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (nonce) DO NOTHING RETURNING id`,
  [event.received_at, event.nonce, event.webhook_id, event.event_type, event.object_id, event.body]);
  return inserted ? Number(inserted.id) : 'replayed';
}

export async function unappliedWebhookEvents(c: SqlConnection, limit: number): Promise<WebhookEvent[]> {
  return c.all<WebhookEvent>(`SELECT e.* FROM webhook_events e LEFT JOIN webhook_event_outcomes o ON o.event_id = e.id
    WHERE o.event_id IS NULL ORDER BY e.id LIMIT ?`, [limit]);
}

export async function recordWebhookOutcome(c: SqlConnection, eventId: number, outcome: string, at: string): Promise<void> {
  await c.run('INSERT INTO webhook_event_outcomes (event_id, outcome, applied_at) VALUES (?, ?, ?) ON CONFLICT (event_id) DO NOTHING', [eventId, outcome, at]);
}

export async function webhookEventCounts(c: SqlConnection): Promise<WebhookEventCounts> {
  const received = Number((await c.first<{ n: number }>('SELECT COUNT(*) AS n FROM webhook_events'))?.n ?? 0);
  const outcomes = await c.all<{ outcome: string; n: number }>('SELECT outcome, COUNT(*) AS n FROM webhook_event_outcomes GROUP BY outcome ORDER BY outcome');
  const applied = outcomes.reduce((sum, o) => sum + Number(o.n), 0);
  return { received, pending: received - applied, outcomes: Object.fromEntries(outcomes.map((o) => [o.outcome, Number(o.n)])) };
}

export async function lastScheduleRun(c: SqlConnection, name: string): Promise<number | null> {
  return (await c.first<{ last_run_at: number }>('SELECT last_run_at FROM schedule_runs WHERE name = ?', [name]))?.last_run_at ?? null;
}

export async function claimScheduleRun(c: SqlConnection, name: string, expected: number | null, at: number): Promise<boolean> {
  if (expected === null) return (await c.run('INSERT INTO schedule_runs (name, last_run_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', [name, at])) === 1;
  return (await c.run('UPDATE schedule_runs SET last_run_at = ? WHERE name = ? AND last_run_at = ?', [at, name, expected])) === 1;
}
