/**
 * Work shared between workers (SharedWorkStore): worker leases, and what is
 * claimed under them (rows, call slots, interrupted intakes). A claim is good
 * while its worker's lease has not expired; nothing needs to be handed back by
 * a worker that died. Claims of many rows are taken with FOR UPDATE SKIP
 * LOCKED, as job queues on PostgreSQL do: two workers never wait on, or take,
 * the same row.
 */
import type pg from 'pg';
import type { PipelineColumns } from './pipeline.js';
import { PIPELINE_COLUMNS } from '../sql-lists.js';
import { PgPipeline, toPipelineRow } from './pipeline.js';
import type { BatchRecord, PipelineRow, SharedWorkStore, WebhookEvent, WorkerRecord } from '../store.js';
import { FOLLOWED_PHASES } from '../../payout-states.js';
import { phaseList } from '../sql-lists.js';

const WORKERS_LOCK = 7_281_923;
const FOLLOWED = phaseList(FOLLOWED_PHASES);

/** `claimed_by` of table `alias` is free for `$worker` at `$now`: nobody's, the worker's own, or a dead worker's. */
const claimable = (column: string, worker: string, now: string): string =>
  `(${column} IS NULL OR ${column} = ${worker} OR NOT EXISTS (SELECT 1 FROM workers w WHERE w.name = ${column} AND w.expires_at > ${now}))`;

export class PgSharedWork extends PgPipeline implements SharedWorkStore {
  protected constructor(pool: pg.Pool) {
    super(pool);
  }

  async joinWorkers(me: WorkerRecord, isAlive: (worker: WorkerRecord) => boolean): Promise<WorkerRecord | null> {
    return this.tx(async (c) => {
      await c.query('SELECT pg_advisory_xact_lock($1)', [WORKERS_LOCK]);
      const held = await this.first<WorkerRecord>('SELECT * FROM workers WHERE name = $1', [me.name], c);
      if (held && held.token !== me.token && held.expires_at > me.renewed_at && isAlive(held)) return held;
      await c.query(`INSERT INTO workers (name, token, host, pid, started_at, renewed_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
        ON CONFLICT (name) DO UPDATE SET token = excluded.token, host = excluded.host, pid = excluded.pid, started_at = excluded.started_at,
          renewed_at = excluded.renewed_at, expires_at = excluded.expires_at`, [me.name, me.token, me.host, me.pid, me.started_at, me.renewed_at, me.expires_at]);
      // A new life under this name holds nothing: what the last one held is free again.
      await c.query('UPDATE rows SET claimed_by = NULL WHERE claimed_by = $1', [me.name]);
      await c.query('UPDATE call_slots SET worker = NULL, taken_at = NULL WHERE worker = $1', [me.name]);
      return null;
    });
  }

  async renewWorker(name: string, token: string, at: number, expiresAt: number): Promise<boolean> {
    // Never revived once expired: another worker may have taken over what it held.
    return (await this.run('UPDATE workers SET renewed_at = $1, expires_at = $2 WHERE name = $3 AND token = $4 AND expires_at > $1', [at, expiresAt, name, token])) === 1;
  }

  async leaveWorkers(name: string, token: string): Promise<void> {
    await this.tx(async (c) => {
      if ((await this.run('UPDATE workers SET expires_at = 0 WHERE name = $1 AND token = $2', [name, token], c)) === 0) return;
      await c.query('UPDATE rows SET claimed_by = NULL WHERE claimed_by = $1', [name]);
      await c.query('UPDATE call_slots SET worker = NULL, taken_at = NULL WHERE worker = $1', [name]);
    });
  }

  async workers(): Promise<WorkerRecord[]> {
    return this.all<WorkerRecord>('SELECT * FROM workers ORDER BY name');
  }

  async claimRow(batchId: string, line: number, worker: string, now: number): Promise<boolean> {
    return (await this.run(`UPDATE rows SET claimed_by = $3, claimed_at = $4 WHERE batch_id = $1 AND line = $2 AND ${claimable('claimed_by', '$3', '$4')}`, [batchId, line, worker, now])) === 1;
  }

  async releaseRow(batchId: string, line: number, worker: string): Promise<void> {
    await this.run('UPDATE rows SET claimed_by = NULL WHERE batch_id = $1 AND line = $2 AND claimed_by = $3', [batchId, line, worker]);
  }

  async claimReadyRows(batchId: string, worker: string, now: number, limit: number): Promise<PipelineRow[]> {
    // Not the worker's own: those it holds it is sending already.
    const rows = await this.all<PipelineColumns>(`UPDATE rows SET claimed_by = $2, claimed_at = $3 WHERE (batch_id, line) IN (
        SELECT batch_id, line FROM rows WHERE batch_id = $1 AND phase = 'ready' AND claimed_by IS DISTINCT FROM $2 AND ${claimable('claimed_by', '$2', '$3')}
        ORDER BY line LIMIT $4 FOR UPDATE SKIP LOCKED)
      RETURNING ${PIPELINE_COLUMNS}`, [batchId, worker, now, limit]);
    return rows.map(toPipelineRow).sort((a, b) => a.line - b.line);
  }

  async claimDueReads(worker: string, now: number, limit: number): Promise<PipelineRow[]> {
    const rows = await this.all<PipelineColumns>(`UPDATE rows SET claimed_by = $1, claimed_at = $2 WHERE (batch_id, line) IN (
        SELECT batch_id, line FROM rows WHERE phase IN ${FOLLOWED} AND next_read_at IS NOT NULL AND next_read_at <= $2
          AND batch_id IN (SELECT id FROM batches WHERE status = 'accepted') AND ${claimable('claimed_by', '$1', '$2')}
        ORDER BY next_read_at, batch_id, line LIMIT $3 FOR UPDATE SKIP LOCKED)
      RETURNING ${PIPELINE_COLUMNS}`, [worker, now, limit]);
    return rows.map(toPipelineRow).sort((a, b) => (a.next_read_at ?? 0) - (b.next_read_at ?? 0) || a.batch_id.localeCompare(b.batch_id) || a.line - b.line);
  }

  /** How many call slots this process knows exist: they are made once, not at every call. */
  private slotsMade = 0;

  async claimWebhookEvents(worker: string, now: number, limit: number): Promise<WebhookEvent[]> {
    const events = await this.all<WebhookEvent & { claimed_by?: string }>(`UPDATE webhook_events SET claimed_by = $1 WHERE id IN (
        SELECT e.id FROM webhook_events e WHERE NOT EXISTS (SELECT 1 FROM webhook_event_outcomes o WHERE o.event_id = e.id)
          AND ${claimable('e.claimed_by', '$1', '$2')} ORDER BY e.id LIMIT $3 FOR UPDATE SKIP LOCKED)
      RETURNING id, received_at, nonce, webhook_id, event_type, object_id, body`, [worker, now, limit]);
    return events.sort((a, b) => a.id - b.id);
  }

  async takeCallSlot(worker: string, slots: number, now: number): Promise<number | null> {
    // The slots exist up to the largest budget any worker was configured with; a worker uses the first `slots`.
    if (this.slotsMade < slots) {
      await this.run('INSERT INTO call_slots (slot) SELECT s FROM generate_series(0, $1 - 1) AS s ON CONFLICT (slot) DO NOTHING', [slots]);
      this.slotsMade = slots;
    }
    const taken = await this.first<{ slot: number }>(`UPDATE call_slots SET worker = $1, taken_at = $2 WHERE slot = (
        SELECT slot FROM call_slots WHERE slot < $3 AND (worker IS NULL OR NOT EXISTS (SELECT 1 FROM workers w WHERE w.name = call_slots.worker AND w.expires_at > $2))
        ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING slot`, [worker, now, slots]);
    return taken?.slot ?? null;
  }

  async returnCallSlot(slot: number, worker: string): Promise<void> {
    await this.run('UPDATE call_slots SET worker = NULL, taken_at = NULL WHERE slot = $1 AND worker = $2', [slot, worker]);
  }

  async sweepOwnClaims(worker: string, before: number, working: readonly string[], slots: readonly number[]): Promise<{ rows: number; slots: number }> {
    const rows = await this.run(`UPDATE rows SET claimed_by = NULL WHERE claimed_by = $1 AND (claimed_at IS NULL OR claimed_at < $2)
      AND NOT ((batch_id || ':' || line) = ANY($3::text[]))`, [worker, before, [...working]]);
    const freed = await this.run('UPDATE call_slots SET worker = NULL, taken_at = NULL WHERE worker = $1 AND (taken_at IS NULL OR taken_at < $2) AND NOT (slot = ANY($3::int[]))', [worker, before, [...slots]]);
    return { rows, slots: freed };
  }

  async heldBy(worker: string): Promise<{ rows: number; slots: number }> {
    return (await this.first<{ rows: number; slots: number }>(`SELECT (SELECT COUNT(*)::int FROM rows WHERE claimed_by = $1) AS rows,
      (SELECT COUNT(*)::int FROM call_slots WHERE worker = $1) AS slots`, [worker])) ?? { rows: 0, slots: 0 };
  }

  async addFileChunk(batchId: string, seq: number, bytes: Buffer): Promise<void> {
    await this.run('INSERT INTO batch_files (batch_id, seq, bytes) VALUES ($1, $2, $3) ON CONFLICT (batch_id, seq) DO UPDATE SET bytes = excluded.bytes', [batchId, seq, bytes]);
  }

  async *fileChunks(batchId: string): AsyncIterable<Buffer> {
    for (let after = -1; ; ) {
      const chunk = await this.first<{ seq: number; bytes: Buffer }>('SELECT seq, bytes FROM batch_files WHERE batch_id = $1 AND seq > $2 ORDER BY seq LIMIT 1', [batchId, after]);
      if (!chunk) return;
      yield chunk.bytes;
      after = chunk.seq;
    }
  }

  async keepManifest(batchId: string, text: string): Promise<void> {
    await this.run('INSERT INTO batch_manifests (batch_id, text) VALUES ($1, $2) ON CONFLICT (batch_id) DO UPDATE SET text = excluded.text', [batchId, text]);
  }

  async keptManifest(batchId: string): Promise<string | null> {
    return (await this.first<{ text: string }>('SELECT text FROM batch_manifests WHERE batch_id = $1', [batchId]))?.text ?? null;
  }

  async orphanedIntakes(worker: string, now: number, ownToo: boolean): Promise<BatchRecord[]> {
    // A live worker's own intakes are running now: only at its start are they of an earlier life.
    return this.all<BatchRecord>(`SELECT * FROM batches b WHERE status = 'intake' AND ${claimable('b.taken_by', '$1', '$2')} AND ($3 OR b.taken_by IS DISTINCT FROM $1)
      ORDER BY received_at, id`, [worker, now, ownToo]);
  }
}
