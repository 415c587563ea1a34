/**
 * Approvals that hold to the last row: someone with write access to the
 * database, but no approver's private key, moves no money. Against the real
 * sandbox behind a counting proxy over HTTP, with a real SQLite file edited by
 * a second connection at the moment that matters (the proxy holds the engine's
 * first call after release; the run's own sleep tells when it is waiting):
 * a row edited or inserted after release is neither created nor funded; a
 * `released` set by hand releases neither an expired approval nor one short of
 * its approvers; approvals copied from another workspace do not verify; a batch
 * released in time resumes after a restart past its approval's expiry.
 */
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateKeys } from '../../src/approvals/keys.js';
import { readRequest, requestText } from '../../src/batch/request-text.js';
import { approvalPolicy } from '../../src/approvals/policy.js';
import type { ApprovalPolicy } from '../../src/approvals/verify.js';
import { systemClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import type { Config } from '../../src/config/config.js';
import { ApprovalGate, RELEASE_SEAL } from '../../src/engine/approval-gate.js';
import { approveBatch } from '../../src/engine/approve.js';
import { previewBatch } from '../../src/engine/preview.js';
import type { RunReport } from '../../src/engine/run.js';
import { runOnce } from '../../src/engine/run.js';
import type { BatchRecord } from '../../src/store/port.js';
import type { SandboxConfigInput } from '../../src/sandbox/config.js';
import type { EngineContext } from '../helpers/engine.js';
import { FAST_ENGINE, FAST_INTAKE, endingRun, engineContext, gbrRowsBatch } from '../helpers/engine.js';
import { gate } from '../helpers/gates.js';
import type { LyingService } from '../helpers/lying-service.js';
import { PATHS, answer, lyingService, transform } from '../helpers/lying-service.js';

const keys = { ada: generateKeys(), grace: generateKeys(), inbox: generateKeys() };
const HOUR = 3_600_000;
const people = {
  ada: { role: 'approver', public_key: keys.ada.publicPem },
  grace: { role: 'approver', public_key: keys.grace.publicPem },
  inbox: { role: 'submitter', public_key: keys.inbox.publicPem },
};
const RATES = { 'USD/GBP': '0.7912' };
const ONE = { enabled: true, people, inbox_submitter: 'inbox', rules: [{ approvers: 1 }], expires_after_ms: HOUR, estimate_rates: RATES };
const TWO = { ...ONE, rules: [{ approvers: 2 }] };

const ids = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${String(i + 1).padStart(3, '0')}`);

interface Engine {
  ctx: EngineContext;
  liar: LyingService;
}

async function engineBehindCounter(sandbox: SandboxConfigInput = {}): Promise<Engine> {
  const ctx = await engineContext(sandbox);
  const liar = await lyingService(ctx.sandbox);
  ctx.serviceUrl = liar.url;
  return { ctx, liar };
}

/**
 * A run of the engine on the system's time (approvals are signed on it): `laterMs` after the time now (a restart that
 * much later), `onSleep` called each time it waits. It ends by itself once its rows are final, or once `until` holds
 * (endingRun); 20 s is only the bound.
 */
async function run(
  { ctx }: Engine,
  approvals: typeof ONE,
  options: { until?: () => boolean | Promise<boolean>; laterMs?: number; engine?: Record<string, unknown>; onSleep?: () => void } = {},
): Promise<RunReport> {
  const config: Config = configSchema.parse({ approvals, intake: FAST_INTAKE, engine: { ...FAST_ENGINE, ...options.engine } });
  config.approvalPolicy = approvalPolicy(config.approvals, ctx.dir) as ApprovalPolicy;
  const client = ctx.client();
  const laterMs = options.laterMs ?? 0;
  try {
    const ending = endingRun(options.until ?? (() => false), 20_000, laterMs);
    return await runOnce({
      workspace: ctx.workspace, store: ctx.store, client, config, log: (event, fields) => void ctx.events.push({ event, fields }), tickMs: 5,
      ...ending,
      sleep: async (ms) => {
        options.onSleep?.();
        await ending.sleep?.(ms);
      },
    });
  } finally {
    await client.close();
  }
}

async function approve({ ctx }: Engine, approvals: typeof ONE, batch: string, as: 'ada' | 'grace'): Promise<void> {
  const policy = approvalPolicy(configSchema.parse({ approvals }).approvals, ctx.dir) as ApprovalPolicy;
  const { writeFileSync } = await import('node:fs');
  const keyFile = `${ctx.dir}/${as}.key`;
  writeFileSync(keyFile, keys[as].privatePem, { mode: 0o600 });
  await approveBatch({ batch, as, keyFile, ceiling: {} }, { store: ctx.store, gate: new ApprovalGate(policy, ctx.store, systemClock, RATES), policy, clock: systemClock, marginPercent: 3 });
}

/** Takes a file of `rows` rows in; returns its batch, awaiting approval. */
async function takeIn(engine: Engine, approvals: typeof ONE, prefix: string, rows: number): Promise<string> {
  engine.ctx.drop(gbrRowsBatch(engine.ctx.dir, `${prefix}.csv`, ids(prefix, rows)), `${prefix}.csv`);
  // The run ends once it has asked for the batch's approval.
  const said = engine.ctx.events.length;
  const batch = (await run(engine, approvals, { until: () => engine.ctx.events.slice(said).some((e) => e.event === 'approval_requested') })).batches[0]?.batch;
  if (batch === undefined) throw new Error(`${prefix}.csv was not taken in`);
  expect((await engine.ctx.store.batch(batch))?.approval).toBe('awaiting');
  return batch;
}

const calls = ({ liar }: Engine, path: RegExp): number => liar.seen.filter((s) => s.method === 'POST' && path.test(s.path)).length;
const createdIds = ({ ctx }: Engine): string[] => [...ctx.sandbox.store.allTransactions()].map((t) => t.external_id);

async function rowsOf({ ctx }: Engine, batch: string): Promise<Map<string, { phase: string; outcome: string | null }>> {
  const rows = new Map<string, { phase: string; outcome: string | null }>();
  for await (const row of ctx.store.rows(batch)) rows.set(row.external_id ?? String(row.line), { phase: row.phase, outcome: row.outcome });
  return rows;
}

describe('approvals that hold to the last row', () => {
  let engine: Engine;
  let other: Engine | undefined;
  beforeEach(async () => {
    engine = await engineBehindCounter();
  });
  afterEach(async () => {
    for (const e of [engine, other]) {
      await e?.liar.close();
      await e?.ctx.stop();
    }
    other = undefined;
  });

  /**
   * A 40-row batch approved by one approver, sent one call at a time; the first call after release (the corridors,
   * before any row is read to be sent) is held until `tamper` has edited the database through a second connection.
   */
  async function tamperAfterRelease(tamper: (db: Database.Database, batch: string) => void): Promise<string> {
    const batch = await takeIn(engine, ONE, 'TT', 40);
    await approve(engine, ONE, batch, 'ada');
    const released = gate();
    const tampered = gate();
    engine.liar.lie({ match: { method: 'GET', path: /^\/corridors\// }, times: 1, act: transform(async (body) => {
      released.open();
      await tampered.opened;
      return body;
    }, 'held_until_tampered') });
    const running = run(engine, ONE, { engine: { concurrency: 1 } });
    await released.opened;
    const db = new Database(engine.ctx.workspace.database);
    let failed: unknown = null;
    try {
      expect(db.prepare('SELECT released FROM batches WHERE id = ?').pluck().get(batch)).toBe(1);
      tamper(db, batch);
    } catch (error) {
      failed = error;
    } finally {
      db.close();
      tampered.open();
    }
    await running;
    if (failed) throw failed;
    return batch;
  }

  const expectHeld = async (batch: string): Promise<void> => {
    expect((await engine.ctx.store.batch(batch))?.approval).toBe('held');
    expect(engine.ctx.events.some((e) => e.event === 'approval_held' && e.fields.batch === batch)).toBe(true);
  };

  it('a row edited after release is neither created nor funded, and holds the batch', async () => {
    const batch = await tamperAfterRelease((db, id) => {
      const { request } = db.prepare("SELECT request FROM rows WHERE batch_id = ? AND external_id = 'TT-039'").get(id) as { request: string };
      const raised = { ...readRequest(request), output_amount_in_cents: '55000' };
      expect(db.prepare("UPDATE rows SET request = ?, output_amount = '55000' WHERE batch_id = ? AND external_id = 'TT-039' AND phase = 'ready'").run(requestText(raised), id).changes).toBe(1);
    });
    expect(createdIds(engine)).not.toContain('TT-039');
    expect([...engine.ctx.sandbox.store.allTransactions()].some((t) => t.output_amount === '55000')).toBe(false);
    expect((await rowsOf(engine, batch)).get('TT-039')).toEqual({ phase: 'not_sent', outcome: 'approval_invalid' });
    expect(calls(engine, PATHS.create)).toBeLessThanOrEqual(38);
    expect(calls(engine, PATHS.fund)).toBeLessThanOrEqual(38);
    await expectHeld(batch);
  });

  it('a row inserted after release is neither created nor funded, and holds the batch', async () => {
    const batch = await tamperAfterRelease((db, id) => {
      const { request } = db.prepare("SELECT request FROM rows WHERE batch_id = ? AND external_id = 'TT-035'").get(id) as { request: string };
      const evil = { ...readRequest(request), external_id: 'TT-EVIL', output_amount_in_cents: '5000' };
      db.exec('CREATE TEMP TABLE evil AS SELECT * FROM rows WHERE 0');
      db.prepare("INSERT INTO evil SELECT * FROM rows WHERE batch_id = ? AND external_id = 'TT-035'").run(id);
      const last = db.prepare('SELECT MAX(line) FROM rows WHERE batch_id = ?').pluck().get(id) as number;
      db.prepare("UPDATE evil SET line = ?, external_id = 'TT-EVIL', request = ?, output_amount = '5000'").run(last + 1, requestText(evil));
      db.exec('INSERT INTO rows SELECT * FROM evil');
    });
    expect(createdIds(engine)).not.toContain('TT-EVIL');
    expect((await rowsOf(engine, batch)).get('TT-EVIL')).toEqual({ phase: 'not_sent', outcome: 'approval_invalid' });
    expect(calls(engine, PATHS.create)).toBeLessThanOrEqual(40);
    expect(calls(engine, PATHS.fund)).toBeLessThanOrEqual(40);
    await expectHeld(batch);
  });

  it('a row edited after its create (another recipient), while its sender is in KYC, is not funded when the sender is approved', async () => {
    await engine.liar.close();
    await engine.ctx.stop();
    // The sandbox applies its due steps (the sender's approval) only when the test ticks it.
    engine = await engineBehindCounter({ tick_ms: 3_600_000, kyc: { mode: 'review', verify_after_ms: 1, approve_after_ms: 1 } });
    const batch = await takeIn(engine, ONE, 'KYC', 2);
    await approve(engine, ONE, batch, 'ada');
    const phases = async (): Promise<string[]> => [...(await rowsOf(engine, batch)).values()].map((r) => r.phase);
    await run(engine, ONE, { until: async () => (await phases()).every((p) => p === 'created') });
    expect(await phases()).toEqual(['created', 'created']);
    expect(calls(engine, PATHS.create)).toBe(2);
    let edited = false;
    const outcome = async (): Promise<string | null | undefined> => (await rowsOf(engine, batch)).get('KYC-002')?.outcome;
    await run(engine, ONE, {
      until: async () => Boolean(await outcome()),
      // Verified at this start, then (as it follows the rows) one is edited in the database and the sender approved.
      onSleep: () => {
        if (edited) return;
        edited = true;
        const db = new Database(engine.ctx.workspace.database);
        const { request } = db.prepare("SELECT request FROM rows WHERE batch_id = ? AND external_id = 'KYC-002'").get(batch) as { request: string };
        // Another recipient: a field the service's answers do not repeat, so only the check against the signed rows sees it.
        const sent = readRequest(request);
        const redirected = { ...sent, recipient: { ...sent.recipient, bank_account: '87654321' } };
        db.prepare("UPDATE rows SET request = ? WHERE batch_id = ? AND external_id = 'KYC-002'").run(requestText(redirected), batch);
        db.close();
        engine.ctx.sandbox.service.tick();
      },
    });
    expect(edited).toBe(true);
    // Each further start reads the row again from the store (none needed where the run above ended it).
    for (let runs = 0; runs < 5 && !(await outcome()); runs++) await run(engine, ONE, { until: async () => Boolean(await outcome()) });
    const funded = [...engine.ctx.sandbox.store.allTransactions()].filter((t) => t.funded_at !== null).map((t) => t.external_id);
    expect(funded).not.toContain('KYC-002');
    expect((await rowsOf(engine, batch)).get('KYC-002')?.outcome).toBe('approval_invalid');
    expect((await engine.ctx.store.batch(batch))?.approval).toBe('held');
  });

  it('released set by hand on a batch whose approval expired sends nothing', async () => {
    const batch = await takeIn(engine, TWO, 'EXP', 6);
    await approve(engine, TWO, batch, 'ada');
    await approve(engine, TWO, batch, 'grace');
    const db = new Database(engine.ctx.workspace.database);
    db.prepare('UPDATE batches SET released = 1 WHERE id = ?').run(batch);
    db.close();
    // A start two hours on: the approval expired an hour before.
    await run(engine, TWO, { laterMs: 2 * HOUR, until: async () => [...(await rowsOf(engine, batch)).values()].every((r) => r.phase === 'not_sent') });
    expect(calls(engine, PATHS.create)).toBe(0);
    expect(calls(engine, PATHS.fund)).toBe(0);
    expect((await engine.ctx.store.batch(batch))?.approval_reason).toMatch(/the approval expired at/);
    expect([...(await rowsOf(engine, batch)).values()].every((r) => r.phase === 'not_sent' && r.outcome === 'approval_invalid')).toBe(true);
  });

  it('released set by hand on a batch with 1 of 2 approvals sends nothing (run, which no longer waits on a batch only a person can move, looks at it at its start)', async () => {
    const batch = await takeIn(engine, TWO, 'HALF', 8);
    await approve(engine, TWO, batch, 'ada');
    const db = new Database(engine.ctx.workspace.database);
    db.prepare('UPDATE batches SET released = 1 WHERE id = ?').run(batch);
    db.close();
    await run(engine, TWO, { until: async () => (await engine.ctx.store.batch(batch))?.approval === 'held' });
    expect(calls(engine, PATHS.create)).toBe(0);
    expect(calls(engine, PATHS.fund)).toBe(0);
    expect((await engine.ctx.store.batch(batch))?.approval).toBe('held');
  });

  it('approvals copied from another workspace, for the same file the same day, do not verify', async () => {
    const batch = await takeIn(engine, ONE, 'COPY', 8);
    await approve(engine, ONE, batch, 'ada');
    other = await engineBehindCounter();
    const there = await takeIn(other, ONE, 'COPY', 8);
    expect(there).toBe(batch);
    const from = new Database(engine.ctx.workspace.database);
    const to = new Database(other.ctx.workspace.database);
    const insert = to.prepare('INSERT INTO approvals (batch_id, person, decision, statement, signature, reason, at) VALUES (@batch_id, @person, @decision, @statement, @signature, @reason, @at)');
    for (const row of from.prepare('SELECT batch_id, person, decision, statement, signature, reason, at FROM approvals').all()) insert.run(row);
    // The approvals' own audit entries copied too (each keeps its hash), so that what stops them is the deployment they name.
    const entry = to.prepare('INSERT INTO audit_log (at, actor, action, subject, details, prev_hash, hash, version) VALUES (@at, @actor, @action, @subject, @details, @prev_hash, @hash, @version)');
    for (const row of from.prepare("SELECT at, actor, action, subject, details, prev_hash, hash, version FROM audit_log WHERE action = 'approved'").all()) entry.run(row);
    to.prepare("UPDATE batches SET approval = 'approved' WHERE id = ?").run(there);
    from.close();
    to.close();
    await run(other, ONE, { until: async () => Boolean((await other?.ctx.store.batch(there))?.approval_reason) });
    expect(calls(other, PATHS.create)).toBe(0);
    expect(calls(other, PATHS.fund)).toBe(0);
    expect((await other?.ctx.store.batch(there))?.approval_reason).toMatch(/deployment: approved "[0-9a-f]{32}", now "[0-9a-f]{32}"/);
    // Each workspace has its own identity, shown by preview, and the statement signed names it.
    const here = await previewBatch(batch, { store: engine.ctx.store, client: null, config: configSchema.parse({ approvals: ONE }), clock: systemClock });
    const elsewhere = await previewBatch(there, { store: other.ctx.store, client: null, config: configSchema.parse({ approvals: ONE }), clock: systemClock });
    expect(here?.deployment).toMatch(/^[0-9a-f]{32}$/);
    expect(elsewhere?.deployment).not.toBe(here?.deployment);
  });

  it('an approval kept in the earlier format (paybatch approval v1, naming no deployment) holds its batch: approve anew', async () => {
    const batch = await takeIn(engine, ONE, 'OLD', 2);
    await approve(engine, ONE, batch, 'ada');
    const db = new Database(engine.ctx.workspace.database);
    const { id, statement } = db.prepare('SELECT id, statement FROM approvals WHERE batch_id = ?').get(batch) as { id: number; statement: string };
    const { deployment: _deployment, ...v1 } = JSON.parse(statement) as Record<string, unknown>;
    db.prepare('UPDATE approvals SET statement = ? WHERE id = ?').run(JSON.stringify(v1), id);
    db.close();
    await run(engine, ONE, { until: async () => Boolean((await engine.ctx.store.batch(batch))?.approval_reason) });
    expect(calls(engine, PATHS.create)).toBe(0);
    expect((await engine.ctx.store.batch(batch))?.approval_reason).toMatch(/earlier format \(paybatch approval v1, naming no deployment\).*approved anew/);
  });

  it('a batch released in time resumes after a restart past its approval\'s expiry; the seal it was released with is needed', async () => {
    const batch = await takeIn(engine, ONE, 'LATE', 4);
    await approve(engine, ONE, batch, 'ada');
    // Released, then nothing sent: the service does not list its corridors.
    engine.liar.lie({ match: { method: 'GET', path: /^\/corridors\// }, act: answer(503, { errors: [{ message: 'down' }] }) });
    await expect(run(engine, ONE, { until: async () => Boolean((await engine.ctx.store.batch(batch))?.release_seal) })).rejects.toThrow(/nothing of batch .* was sent/);
    const stored = await engine.ctx.store.batch(batch);
    expect(stored).toMatchObject({ released: 1, release_seal: expect.stringMatching(/^[0-9a-f]{64}$/) });
    engine.liar.clear();
    // The same seal made over another release time (a backdated release) is not this deployment's.
    const db = new Database(engine.ctx.workspace.database);
    const realTime = stored?.released_at as string;
    db.prepare('UPDATE batches SET released_at = ? WHERE id = ?').run(new Date(Date.parse(realTime) - 1000).toISOString(), batch);
    db.close();
    const client = engine.ctx.client();
    const key = client.derivedKey(RELEASE_SEAL);
    await client.close();
    const policy = approvalPolicy(configSchema.parse({ approvals: ONE }).approvals, engine.ctx.dir) as ApprovalPolicy;
    const twoHoursOn = new ApprovalGate(policy, engine.ctx.store, { now: () => Date.now() + 2 * HOUR }, RATES, key);
    expect(await twoHoursOn.check((await engine.ctx.store.batch(batch)) as BatchRecord)).toMatchObject({ kind: 'ended', reason: expect.stringMatching(/the approval expired at/) });
    // The batch is held now, and a hold stays: the database is put back as it was before the backdating (its release
    // time, and the approval state the check above changed), as restoring it from a backup would.
    const restore = new Database(engine.ctx.workspace.database);
    restore.prepare("UPDATE batches SET released_at = ?, approval = ?, approval_reason = ? WHERE id = ?").run(realTime, stored?.approval, stored?.approval_reason, batch);
    restore.close();
    const report = await run(engine, ONE, { laterMs: 2 * HOUR });
    expect(calls(engine, PATHS.create)).toBe(4);
    expect(report.batches[0]?.by_state).toEqual({ paid: 4 });
  });
});
