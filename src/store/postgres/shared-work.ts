/**
 * Work shared between workers (SharedWorkStore): worker leases, and what is
 * claimed under them (rows, call slots, interrupted intakes). A claim is good
 * while its worker's lease has not expired; nothing needs to be handed back by
 * a worker that died. Claims of many rows are taken with FOR UPDATE SKIP
 * LOCKED, as job queues on PostgreSQL do: two workers never wait on, or take,
 * the same row.
 */
import type { PipelineColumns } from '../queries/pipeline.js';
import { OPEN_BATCHES, toPipelineRow } from '../queries/pipeline.js';
import { FOLLOWED, PIPELINE_COLUMNS } from '../sql-lists.js';
import type { BatchRecord, PipelineRow, WebhookEvent, WorkerRecord } from '../port.js';
import type { PgConnection } from './client.js';

const WORKERS_LOCK = 7_281_923;

/** How many call slots this process knows exist: they are made once, not at every call. */
export interface CallSlotsMade {
  slots: number;
}

/** `claimed_by` of table `alias` is free for `$worker` at `$now`: nobody's, the worker's own, or a dead worker's. */
const claimable = (column: string, worker: string, now: string): string =>
  `(${column} IS NULL OR ${column} = ${worker} OR NOT EXISTS (SELECT 1 FROM workers w WHERE w.name = ${column} AND w.expires_at > ${now}))`;

export async function joinWorkers(c: PgConnection, me: WorkerRecord, isAlive: (worker: WorkerRecord) => boolean): Promise<WorkerRecord | null> {
  return c.tx(async (tx) => {
    await tx.lockForTransaction(WORKERS_LOCK);
    const held = await tx.first<WorkerRecord>('SELECT * FROM workers WHERE name = $1', [me.name]);
    if (held && held.token !== me.token && held.expires_at > me.renewed_at && isAlive(held)) return held;
    await tx.run(`INSERT INTO workers (name, token, host, pid, started_at, renewed_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
      ON CONFLICT (name) DO UPDATE SET token = excluded.token, host = excluded.host, pid = excluded.pid, started_at = excluded.started_at,
        renewed_at = excluded.renewed_at, expires_at = excluded.expires_at`, [me.name, me.token, me.host, me.pid, me.started_at, me.renewed_at, me.expires_at]);
    // A new life under this name holds nothing: what the last one held is free again.
    await tx.run('UPDATE rows SET claimed_by = NULL WHERE claimed_by = $1', [me.name]);
    await tx.run('UPDATE call_slots SET worker = NULL, taken_at = NULL WHERE worker = $1', [me.name]);
    return null;
  });
}

export async function renewWorker(c: PgConnection, name: string, token: string, at: number, expiresAt: number): Promise<boolean> {
  // Never revived once expired: another worker may have taken over what it held.
  return (await c.run('UPDATE workers SET renewed_at = $1, expires_at = $2 WHERE name = $3 AND token = $4 AND expires_at > $1', [at, expiresAt, name, token])) === 1;
}

export async function leaveWorkers(c: PgConnection, name: string, token: string): Promise<void> {
  await c.tx(async (tx) => {
    if ((await tx.run('UPDATE workers SET expires_at = 0 WHERE name = $1 AND token = $2', [name, token])) === 0) return;
    await tx.run('UPDATE rows SET claimed_by = NULL WHERE claimed_by = $1', [name]);
    await tx.run('UPDATE call_slots SET worker = NULL, taken_at = NULL WHERE worker = $1', [name]);
  });
}

export async function workers(c: PgConnection): Promise<WorkerRecord[]> {
  return c.all<WorkerRecord>('SELECT * FROM workers ORDER BY name');
}

export async function claimRow(c: PgConnection, batchId: string, line: number, worker: string, now: number): Promise<PipelineRow | null> {
  const claimed = await c.first<PipelineColumns>(`UPDATE rows SET claimed_by = $3, claimed_at = $4 WHERE batch_id = $1 AND line = $2 AND ${claimable('claimed_by', '$3', '$4')}
    RETURNING ${PIPELINE_COLUMNS}`, [batchId, line, worker, now]);
  return claimed ? toPipelineRow(claimed) : null;
}

export async function releaseRow(c: PgConnection, batchId: string, line: number, worker: string): Promise<void> {
  await c.run('UPDATE rows SET claimed_by = NULL WHERE batch_id = $1 AND line = $2 AND claimed_by = $3', [batchId, line, worker]);
}

export async function claimReadyRows(c: PgConnection, batchId: string, worker: string, now: number, limit: number): Promise<PipelineRow[]> {
  // Not the worker's own: those it holds it is sending already.
  const rows = await c.all<PipelineColumns>(`UPDATE rows SET claimed_by = $2, claimed_at = $3 WHERE (batch_id, line) IN (
      SELECT batch_id, line FROM rows WHERE batch_id = $1 AND phase = 'ready' AND claimed_by IS DISTINCT FROM $2 AND ${claimable('claimed_by', '$2', '$3')}
      ORDER BY line LIMIT $4 FOR UPDATE SKIP LOCKED)
    RETURNING ${PIPELINE_COLUMNS}`, [batchId, worker, now, limit]);
  return rows.map(toPipelineRow).sort((a, b) => a.line - b.line);
}

export async function claimDueReads(c: PgConnection, worker: string, now: number, limit: number): Promise<PipelineRow[]> {
  const rows = await c.all<PipelineColumns>(`UPDATE rows SET claimed_by = $1, claimed_at = $2 WHERE (batch_id, line) IN (
      SELECT batch_id, line FROM rows WHERE phase IN ${FOLLOWED} AND next_read_at IS NOT NULL AND next_read_at <= $2
        AND batch_id IN ${OPEN_BATCHES} AND ${claimable('claimed_by', '$1', '$2')}
      ORDER BY next_read_at, batch_id, line LIMIT $3 FOR UPDATE SKIP LOCKED)
    RETURNING ${PIPELINE_COLUMNS}`, [worker, now, limit]);
  return rows.map(toPipelineRow).sort((a, b) => (a.next_read_at ?? 0) - (b.next_read_at ?? 0) || a.batch_id.localeCompare(b.batch_id) || a.line - b.line);
}

export async function claimWebhookEvents(c: PgConnection, worker: string, now: number, limit: number): Promise<WebhookEvent[]> {
  const events = await c.all<WebhookEvent & { claimed_by?: string }>(`UPDATE webhook_events SET claimed_by = $1 WHERE id IN (
      SELECT e.id FROM webhook_events e WHERE NOT EXISTS (SELECT 1 FROM webhook_event_outcomes o WHERE o.event_id = e.id)
        AND ${claimable('e.claimed_by', '$1', '$2')} ORDER BY e.id LIMIT $3 FOR UPDATE SKIP LOCKED)
    RETURNING id, received_at, nonce, webhook_id, event_type, object_id, body`, [worker, now, limit]);
  return events.sort((a, b) => a.id - b.id);
}

export async function takeCallSlot(c: PgConnection, made: CallSlotsMade, worker: string, slots: number, now: number): Promise<number | null> {
  // The slots exist up to the largest budget any worker was configured with; a worker uses the first `slots`.
  if (made.slots < slots) {
    await c.run('INSERT INTO call_slots (slot) SELECT s FROM generate_series(0, $1 - 1) AS s ON CONFLICT (slot) DO NOTHING', [slots]);
    made.slots = slots;
  }
  const taken = await c.first<{ slot: number }>(`UPDATE call_slots SET worker = $1, taken_at = $2 WHERE slot = (
      SELECT slot FROM call_slots WHERE slot < $3 AND (worker IS NULL OR NOT EXISTS (SELECT 1 FROM workers w WHERE w.name = call_slots.worker AND w.expires_at > $2))
      ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING slot`, [worker, now, slots]);
  return taken?.slot ?? null;
}

export async function returnCallSlot(c: PgConnection, slot: number, worker: string, takenAt: number): Promise<void> {
  await c.run('UPDATE call_slots SET worker = NULL, taken_at = NULL WHERE slot = $1 AND worker = $2 AND taken_at = $3', [slot, worker, takenAt]);
}

export async function sweepOwnClaims(c: PgConnection, worker: string, before: number, working: readonly string[], slots: readonly number[]): Promise<{ rows: number; slots: number }> {
  const rows = await c.run(`UPDATE rows SET claimed_by = NULL WHERE claimed_by = $1 AND (claimed_at IS NULL OR claimed_at < $2)
    AND NOT ((batch_id || ':' || line) = ANY($3::text[]))`, [worker, before, [...working]]);
  const freed = await c.run('UPDATE call_slots SET worker = NULL, taken_at = NULL WHERE worker = $1 AND (taken_at IS NULL OR taken_at < $2) AND NOT (slot = ANY($3::int[]))', [worker, before, [...slots]]);
  return { rows, slots: freed };
}

export async function heldBy(c: PgConnection, worker: string): Promise<{ rows: number; slots: number }> {
  return (await c.first<{ rows: number; slots: number }>(`SELECT (SELECT COUNT(*)::int FROM rows WHERE claimed_by = $1) AS rows,
    (SELECT COUNT(*)::int FROM call_slots WHERE worker = $1) AS slots`, [worker])) ?? { rows: 0, slots: 0 };
}

export async function addFileChunk(c: PgConnection, batchId: string, seq: number, bytes: Buffer): Promise<void> {
  await c.run('INSERT INTO batch_files (batch_id, seq, bytes) VALUES ($1, $2, $3) ON CONFLICT (batch_id, seq) DO UPDATE SET bytes = excluded.bytes', [batchId, seq, bytes]);
}

export async function * fileChunks(c: PgConnection, batchId: string): AsyncIterable<Buffer> {
  for (let after = -1; ; ) {
    const chunk = await c.first<{ seq: number; bytes: Buffer }>('SELECT seq, bytes FROM batch_files WHERE batch_id = $1 AND seq > $2 ORDER BY seq LIMIT 1', [batchId, after]);
    if (!chunk) return;
    yield chunk.bytes;
    after = chunk.seq;
  }
}

export async function keepManifest(c: PgConnection, batchId: string, text: string): Promise<void> {
  await c.run('INSERT INTO batch_manifests (batch_id, text) VALUES ($1, $2) ON CONFLICT (batch_id) DO UPDATE SET text = excluded.text', [batchId, text]);
}

export async function keptManifest(c: PgConnection, batchId: string): Promise<string | null> {
  return (await c.first<{ text: string }>('SELECT text FROM batch_manifests WHERE batch_id = $1', [batchId]))?.text ?? null;
}

export async function orphanedIntakes(c: PgConnection, worker: string, now: number, ownToo: boolean): Promise<BatchRecord[]> {
  // A live worker's own intakes are running now: only at its start are they of an earlier life.
  return c.all<BatchRecord>(`SELECT * FROM batches b WHERE status = 'intake' AND ${claimable('b.taken_by', '$1', '$2')} AND ($3 OR b.taken_by IS DISTINCT FROM $1)
    ORDER BY received_at, id`, [worker, now, ownToo]);
}
