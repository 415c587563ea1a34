/**
 * What only the shared database does, with two workers each on its own
 * connection pool, as on two machines: leases, row claims (SKIP LOCKED), call
 * slots, schedules run once, kept file bytes, intakes left by a dead worker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { WorkerRecord } from '../../src/store/port.js';
import { freshDatabase, postgresAvailable } from '../helpers/postgres.js';
import type { FreshDatabase } from '../helpers/postgres.js';

const available = await postgresAvailable('the shared-work tests of the PostgreSQL store');
const AT = '2026-03-02T09:00:00.000Z';
const worker = (name: string, token: string, at: number, leaseMs = 30_000): WorkerRecord => ({ name, token, host: 'h', pid: 1, started_at: at, renewed_at: at, expires_at: at + leaseMs });

describe.skipIf(!available)('PostgreSQL: work shared between workers', () => {
  let database: FreshDatabase;
  let one: PostgresStore;
  let two: PostgresStore;
  beforeAll(async () => {
    database = await freshDatabase();
    one = await PostgresStore.open(database.url);
    // The second opens the same database (its migrations already applied: nothing to do).
    two = await PostgresStore.open(database.url);
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
    await database?.drop();
  });

  async function batchOf(rows: number, sha: string): Promise<string> {
    const id = await one.beginBatch({ file_name: 'f.csv', sha256: sha, size_bytes: 1, policy: 'reject_file', received_at: AT, file_mtime_ms: 1, send_after: 0 });
    await one.addRows(id, Array.from({ length: rows }, (_, i) => ({
      line: i + 2, external_id: `${sha.slice(0, 4)}-${i}`, errors: [],
      request: { external_id: `${sha.slice(0, 4)}-${i}`, type: 'bank', input_currency_code: 'USD', output_currency_code: 'GBP', output_amount_in_cents: '100', sender: { external_id: 'S' }, recipient: { country_code: 'GBR' } },
    })));
    await one.acceptBatch(id);
    return id;
  }

  it('a worker name is held by one live process; a dead one is taken over, and its new life holds nothing of the old', async () => {
    expect(await one.joinWorkers(worker('a', 't1', 1_000), () => true)).toBeNull();
    expect(await two.joinWorkers(worker('a', 't2', 2_000), () => true)).toMatchObject({ token: 't1' });
    // The holder's process is gone (or its lease expired): taken over.
    expect(await two.joinWorkers(worker('a', 't2', 2_000), () => false)).toBeNull();
    expect(await one.renewWorker('a', 't1', 3_000, 33_000)).toBe(false);
    expect(await two.renewWorker('a', 't2', 3_000, 33_000)).toBe(true);
    expect(await two.joinWorkers(worker('b', 'u1', 40_000), () => true)).toBeNull();
    // 'a' expired at 33 000: at 40 000 a new 'a' joins although its old process says it is alive.
    expect(await one.joinWorkers(worker('a', 't3', 40_000), () => true)).toBeNull();
    expect((await one.workers()).map((w) => [w.name, w.token])).toEqual([['a', 't3'], ['b', 'u1']]);
  });

  it('a lease that expired is never renewed: its worker must stop, what it held has gone to others', async () => {
    expect(await one.joinWorkers(worker('r', 'r1', 500_000, 30_000), () => true)).toBeNull();
    expect(await one.renewWorker('r', 'r1', 520_000, 550_000)).toBe(true);
    expect(await one.renewWorker('r', 'r1', 560_000, 590_000)).toBe(false);
  });

  it('a worker frees what it holds but does not use (a release that failed), never what it uses', async () => {
    const now = 600_000;
    await one.joinWorkers(worker('sw', 's', now), () => true);
    const batch = await batchOf(4, 's'.repeat(64));
    await one.claimRow(batch, 2, 'sw', now - 120_000);
    await one.claimRow(batch, 3, 'sw', now - 120_000);
    await one.claimRow(batch, 4, 'sw', now);
    const slot = await one.takeCallSlot('sw', 2, now - 120_000);
    expect(await one.sweepOwnClaims('sw', now - 60_000, [`${batch}:3`], [])).toEqual({ rows: 1, slots: 1 });
    expect(await one.heldBy('sw')).toEqual({ rows: 2, slots: 0 });
    expect(slot).not.toBeNull();
  });

  it('rows are claimed by one worker at a time, in disjoint pages; a dead worker\'s claims go to the others', async () => {
    const now = 41_000;
    await one.joinWorkers(worker('p', 'p1', now), () => true);
    await two.joinWorkers(worker('q', 'q1', now), () => true);
    const batch = await batchOf(10, 'c'.repeat(64));
    const [pageP, pageQ] = await Promise.all([one.claimReadyRows(batch, 'p', now, 4), two.claimReadyRows(batch, 'q', now, 4)]);
    const lines = [...pageP, ...pageQ].map((r) => r.line);
    expect(new Set(lines).size).toBe(8);
    expect(await one.claimRow(batch, pageQ[0]?.line as number, 'p', now)).toBeNull();
    // Claimed, the row comes as it stands.
    expect(await one.claimRow(batch, pageP[0]?.line as number, 'p', now)).toMatchObject({ batch_id: batch, line: pageP[0]?.line, phase: 'ready', revision: pageP[0]?.revision });
    expect(await one.heldBy('p')).toEqual({ rows: 4, slots: 0 });
    await one.releaseRow(batch, pageP[0]?.line as number, 'p');
    expect(await two.claimRow(batch, pageP[0]?.line as number, 'q', now)).toMatchObject({ line: pageP[0]?.line });
    // A worker's next page leaves out what it holds already.
    const heldByP = pageP.slice(1).map((r) => r.line);
    expect((await one.claimReadyRows(batch, 'p', now, 100)).map((r) => r.line).some((line) => heldByP.includes(line))).toBe(false);
    // q dies: past its lease, p takes q's rows.
    const later = now + 31_000;
    const taken = await one.claimReadyRows(batch, 'p', later, 100);
    expect(taken.map((r) => r.line).sort((a, b) => a - b)).toEqual([...pageQ.map((r) => r.line), pageP[0]?.line as number].sort((a, b) => a - b));
    expect(await one.heldBy('p')).toEqual({ rows: 10, slots: 0 });
    // A worker that leaves frees what it held at once.
    await one.leaveWorkers('p', 'p1');
    expect(await one.heldBy('p')).toEqual({ rows: 0, slots: 0 });
  });

  it('call slots: never more taken than the budget, across workers; a dead worker\'s slots are free again', async () => {
    const now = 100_000;
    await one.joinWorkers(worker('s1', 'x', now), () => true);
    await two.joinWorkers(worker('s2', 'y', now), () => true);
    const taken = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? one : two).takeCallSlot(i % 2 === 0 ? 's1' : 's2', 3, now)));
    expect(taken.filter((s) => s !== null).sort()).toEqual([0, 1, 2]);
    const ofS2 = (await two.heldBy('s2')).slots;
    await one.returnCallSlot(taken.find((s) => s !== null) as number, 'nobody', now);
    expect(await one.takeCallSlot('s1', 3, now)).toBeNull();
    // A return frees the take it names only: a late one, for an earlier take of a slot taken again, frees nothing.
    const mine = taken.find((s, i) => s !== null && i % 2 === 0) as number;
    await one.returnCallSlot(mine, 's1', now - 1);
    expect(await one.takeCallSlot('s1', 3, now)).toBeNull();
    // s1 dies; at s1's expiry its slots go to s2.
    await two.renewWorker('s2', 'y', now + 20_000, now + 60_000);
    const after = await Promise.all([two.takeCallSlot('s2', 3, now + 31_000), two.takeCallSlot('s2', 3, now + 31_000), two.takeCallSlot('s2', 3, now + 31_000)]);
    expect(after.filter((s) => s !== null).length).toBe(3 - ofS2);
  });

  it('webhook events kept by any receiver are each claimed by one worker; a dead worker\'s go to the others', async () => {
    const now = 150_000;
    await one.joinWorkers(worker('e1', 'e', now), () => true);
    await two.joinWorkers(worker('e2', 'f', now), () => true);
    for (let i = 0; i < 6; i++) await (i % 2 === 0 ? one : two).recordWebhookEvent({ received_at: AT, nonce: `n-${i}`, webhook_id: 'w', event_type: 'transaction.paid', object_id: `tr_${i}`, body: '{}' });
    const [a, b] = await Promise.all([one.claimWebhookEvents('e1', now, 4), two.claimWebhookEvents('e2', now, 4)]);
    const ids = [...(a ?? []), ...(b ?? [])].map((e) => e.id);
    expect(new Set(ids).size).toBe(6);
    // Applied ones are not claimed again; e2 dies and its unapplied events go to e1.
    for (const event of a ?? []) await one.recordWebhookOutcome(event.id, 'applied', AT);
    expect((await one.claimWebhookEvents('e1', now, 10)).length).toBe(0);
    expect((await one.claimWebhookEvents('e1', now + 31_000, 10)).map((e) => e.id)).toEqual((b ?? []).map((e) => e.id));
  });

  it('a schedule due on two workers at once runs on one', async () => {
    expect(await one.claimScheduleRun('reconcile', null, 1_000)).toBe(true);
    const claims = await Promise.all([one.claimScheduleRun('reconcile', 1_000, 2_000), two.claimScheduleRun('reconcile', 1_000, 2_001)]);
    expect(claims.filter(Boolean).length).toBe(1);
  });

  it('a file\'s bytes are kept whole, in order; intakes are recovered only from dead takers, and by one worker', async () => {
    const id = await one.beginBatch({ file_name: 'k.csv', sha256: 'k'.repeat(64), size_bytes: 3, policy: 'reject_file', received_at: AT, file_mtime_ms: 1, send_after: 0, taken_by: 'alive' });
    const dead = await one.beginBatch({ file_name: 'd.csv', sha256: 'd'.repeat(64), size_bytes: 3, policy: 'reject_file', received_at: AT, file_mtime_ms: 1, send_after: 0, taken_by: 'gone' });
    for (const [seq, text] of [[0, 'a,b\n'], [1, '1,2\n'], [2, '3,4\n']] as const) await one.addFileChunk(id, seq, Buffer.from(text));
    const bytes: Buffer[] = [];
    for await (const chunk of two.fileChunks(id)) bytes.push(chunk);
    expect(Buffer.concat(bytes).toString()).toBe('a,b\n1,2\n3,4\n');
    const now = 200_000;
    await one.joinWorkers(worker('alive', 'z', now), () => true);
    await one.joinWorkers(worker('gone', 'g', now - 60_000), () => true);
    expect((await two.orphanedIntakes('me', now, true)).map((b) => b.id)).toEqual([dead]);
    // A live worker's own intake is running: not orphaned, except at its start (an earlier life's).
    expect((await one.orphanedIntakes('alive', now, false)).map((b) => b.id)).toEqual([dead]);
    expect((await one.orphanedIntakes('alive', now, true)).map((b) => b.id).sort()).toEqual([id, dead].sort());
    const won = await Promise.all([one.rejectBatch(dead, 'interrupted'), two.rejectBatch(dead, 'interrupted')]);
    expect(won.filter(Boolean).length).toBe(1);
    expect(await one.batch(id)).toMatchObject({ taken_by: 'alive', status: 'intake' });
    // A batch recovered as interrupted is never accepted after all.
    expect(await one.acceptBatch(dead)).toBeNull();
    expect((await one.batch(dead))?.status).toBe('rejected');
  });

  it('one transaction id is adopted by one row, however many workers try at once', async () => {
    const batch = await batchOf(40, 't'.repeat(64));
    const outcomes = await Promise.all(Array.from({ length: 20 }, async (_, i) => {
      const [a, b] = [await one.row(batch, 2 * i + 2), await two.row(batch, 2 * i + 3)];
      return Promise.all([
        one.commitRow(batch, 2 * i + 2, a?.revision as number, { changes: { transaction_id: `tr_same_${i}` } }),
        two.commitRow(batch, 2 * i + 3, b?.revision as number, { changes: { transaction_id: `tr_same_${i}` } }),
      ]);
    }));
    for (const pair of outcomes) expect(pair.map((o) => o.kind).sort()).toEqual(['applied', 'taken']);
  });
});
