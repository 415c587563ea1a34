/**
 * A batch the approval gate held for a person (a row's request edited in the
 * database after approval) stays held at the next start even once the row is
 * put back: the verification passing again neither lets it go nor writes over
 * the reason it was held for, and the rows still waiting for their sender's KYC
 * are not funded (found by an attack on the gate: they once were).
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { generateKeys } from '../../src/approvals/keys.js';
import { readRequest, requestText } from '../../src/batch/request-text.js';
import { approvalPolicy } from '../../src/approvals/policy.js';
import type { ApprovalPolicy } from '../../src/approvals/verify.js';
import { systemClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import type { Config } from '../../src/config/config.js';
import { ApprovalGate } from '../../src/engine/approval-gate.js';
import { approveBatch } from '../../src/engine/approve.js';
import type { RunReport } from '../../src/engine/run.js';
import { runOnce } from '../../src/engine/run.js';
import type { EngineContext } from '../helpers/engine.js';
import { FAST_ENGINE, FAST_INTAKE, endingRun, engineContext, gbrRowsBatch } from '../helpers/engine.js';

const keys = { ada: generateKeys(), inbox: generateKeys() };
const people = { ada: { role: 'approver', public_key: keys.ada.publicPem }, inbox: { role: 'submitter', public_key: keys.inbox.publicPem } };
const RATES = { 'USD/GBP': '0.7912' };
const ONE = { enabled: true, people, inbox_submitter: 'inbox', rules: [{ approvers: 1 }], expires_after_ms: 3_600_000, estimate_rates: RATES };

/** A run on the system's time (approvals are signed on it), ended once `done` holds; 20 s the bound (endingRun). */
async function run(ctx: EngineContext, done: () => boolean | Promise<boolean>): Promise<RunReport> {
  const config: Config = configSchema.parse({ approvals: ONE, intake: FAST_INTAKE, engine: FAST_ENGINE });
  config.approvalPolicy = approvalPolicy(config.approvals, ctx.dir) as ApprovalPolicy;
  const client = ctx.client();
  try {
    return await runOnce({
      workspace: ctx.workspace, store: ctx.store, client, config,
      log: (event, fields) => void ctx.events.push({ event, fields }), tickMs: 5, ...endingRun(done, 20_000),
    });
  } finally {
    await client.close();
  }
}

describe('a batch held for a person', () => {
  let ctx: EngineContext;
  afterEach(async () => ctx?.stop());

  it('stays held at the next start when the row that held it is put back', async () => {
    // The sandbox applies its due steps (the sender's approval) only when the test ticks it.
    ctx = await engineContext({ tick_ms: 3_600_000, kyc: { mode: 'review', verify_after_ms: 1, approve_after_ms: 1 } });
    ctx.drop(gbrRowsBatch(ctx.dir, 'K.csv', ['K-001', 'K-002']), 'K.csv');
    // Taken in, and its approval asked for.
    const batch = (await run(ctx, () => ctx.events.some((e) => e.event === 'approval_requested'))).batches[0]?.batch;
    if (batch === undefined) throw new Error('K.csv was not taken in');
    const keyFile = `${ctx.dir}/ada.key`;
    const { writeFileSync } = await import('node:fs');
    writeFileSync(keyFile, keys.ada.privatePem, { mode: 0o600 });
    const policy = approvalPolicy(configSchema.parse({ approvals: ONE }).approvals, ctx.dir) as ApprovalPolicy;
    await approveBatch({ batch, as: 'ada', keyFile, ceiling: {} }, { store: ctx.store, gate: new ApprovalGate(policy, ctx.store, systemClock, RATES), policy, clock: systemClock, marginPercent: 3 });
    const phases = async (): Promise<string[]> => {
      const all: string[] = [];
      for await (const row of ctx.store.rows(batch as string)) all.push(row.phase);
      return all;
    };
    await run(ctx, async () => (await phases()).every((p) => p === 'created'));
    expect(await phases()).toEqual(['created', 'created']);

    // K-002 redirected in the database: the next start holds the batch for a person.
    const db = new Database(ctx.workspace.database);
    const { request } = db.prepare("SELECT request FROM rows WHERE batch_id = ? AND external_id = 'K-002'").get(batch) as { request: string };
    const sent = readRequest(request);
    db.prepare("UPDATE rows SET request = ? WHERE batch_id = ? AND external_id = 'K-002'").run(requestText({ ...sent, recipient: { ...sent.recipient, bank_account: '87654321' } }), batch);
    await run(ctx, async () => (await ctx.store.batch(batch))?.approval === 'held');
    const held = await ctx.store.batch(batch);
    expect(held?.approval).toBe('held');

    // Put back as it was, and the senders approved: nobody has looked at the batch.
    db.prepare("UPDATE rows SET request = ? WHERE batch_id = ? AND external_id = 'K-002'").run(request, batch);
    db.close();
    ctx.sandbox.service.tick();
    // Three starts, each ended once it has said the batch is held (its check at the start, before anything is sent).
    for (let runs = 0; runs < 3; runs++) {
      const said = ctx.events.length;
      await run(ctx, () => ctx.events.slice(said).some((e) => e.event === 'approval_held' && e.fields.batch === batch));
    }
    const funded = [...ctx.sandbox.store.allTransactions()].filter((t) => t.funded_at !== null).map((t) => t.external_id);
    const after = await ctx.store.batch(batch);
    // On the code as it stands: approval 'approved' (reason "by ada"), K-001 and K-002 funded.
    expect({ approval: after?.approval, funded }).toEqual({ approval: 'held', funded: [] });
  });
});
