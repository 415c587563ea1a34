/**
 * With approvals on, the possible duplicates of a batch and the allowances
 * made for them are part of what approvers sign (issue 37): the statement's
 * duplicates_sha256, recomputed by the gate whenever an approval is verified.
 * The real sandbox over HTTP, a real SQLite file. The attack: a row held as a
 * possible duplicate is allowed after the approval (paybatch allow refuses; a
 * write to the database does it anyway), then the batch is run. It is never
 * sent without a new signature.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { generateKeys } from '../../src/approvals/keys.js';
import { approvalPolicy } from '../../src/approvals/policy.js';
import type { ApprovalPolicy } from '../../src/approvals/verify.js';
import { systemClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import { allowRow } from '../../src/engine/allow.js';
import { ApprovalGate } from '../../src/engine/approval-gate.js';
import { approveBatch } from '../../src/engine/approve.js';
import { renderPreview } from '../../src/cli/preview-command.js';
import type { Preview } from '../../src/engine/preview.js';
import { previewBatch } from '../../src/engine/preview.js';
import type { EngineContext } from '../helpers/engine.js';
import { engineContext, sqliteOf, template } from '../helpers/engine.js';

const keys = { ada: generateKeys(), inbox: generateKeys() };
const people = { ada: { role: 'approver', public_key: keys.ada.publicPem }, inbox: { role: 'submitter', public_key: keys.inbox.publicPem } };
const ONE = { enabled: true, people, inbox_submitter: 'inbox', rules: [{ approvers: 1 }], expires_after_ms: 3_600_000 };
const PAID_IBAN = 'DE89370400440532013000';
const OTHER_IBAN = 'DE44500105175407324931';

function eurBatch(dir: string, name: string, rows: readonly { id: string; iban: string }[]): string {
  const lines = readFileSync(template('demo-batch.csv'), 'utf8').split('\n');
  const eur = lines.find((l) => l.startsWith('DEMO-015,')) as string;
  const file = join(dir, name);
  writeFileSync(file, `${lines[0]}\n${rows.map((r) => eur.replace('DEMO-015', r.id).replace('DE53370400440532013066', r.iban)).join('\n')}\n`);
  return file;
}

/** INV-1 paid without approvals; then a batch under approval with INV-2 (its twin, held) and INV-3: that batch, awaiting. */
async function heldUnderApproval(ctx: EngineContext): Promise<string> {
  ctx.drop(eurBatch(ctx.dir, 'first.csv', [{ id: 'INV-1', iban: PAID_IBAN }]));
  await ctx.run({}, 5000);
  ctx.drop(eurBatch(ctx.dir, 'second.csv', [{ id: 'INV-2', iban: PAID_IBAN }, { id: 'INV-3', iban: OTHER_IBAN }]));
  const run = await ctx.run({ approvals: ONE }, 300);
  const batch = run.batches.find((b) => b.file === 'batch-2.csv')?.batch as string;
  expect(await ctx.store.batch(batch)).toMatchObject({ approval: 'awaiting' });
  expect(await ctx.store.rowBySubmittedExternalId('INV-2')).toMatchObject({ phase: 'duplicate_hold' });
  return batch;
}

async function approve(ctx: EngineContext, batch: string): Promise<{ duplicates_sha256?: string }> {
  const keyFile = join(ctx.dir, 'ada.key');
  writeFileSync(keyFile, keys.ada.privatePem, { mode: 0o600 });
  const policy = approvalPolicy(configSchema.parse({ approvals: ONE }).approvals, ctx.dir) as ApprovalPolicy;
  const { statement } = await approveBatch({ batch, as: 'ada', keyFile, ceiling: {} }, { store: ctx.store, gate: new ApprovalGate(policy, ctx.store, systemClock), policy, clock: systemClock, marginPercent: 3 });
  return statement;
}

const sentIds = (ctx: EngineContext): string[] => [...ctx.sandbox.store.allTransactions()].map((t) => t.external_id);
async function rowOf(ctx: EngineContext, batch: string, externalId: string): Promise<{ phase: string; outcome: string | null } | undefined> {
  for await (const row of ctx.store.rows(batch)) if (row.external_id === externalId) return row;
  return undefined;
}
const allow = (batch: string) => allowRow({ batch, externalId: 'INV-2', reason: 'a second invoice', person: 'Grace Hopper' }, { store: ctx.store, clock: systemClock, batch: configSchema.parse({}).batch });
let ctx: EngineContext;

describe('possible duplicates under approval', () => {
  afterEach(async () => ctx.stop());

  it('an allowance made before approval is shown to the approver and signed; the row is then paid', async () => {
    ctx = await engineContext();
    const batch = await heldUnderApproval(ctx);
    const before = await previewBatch(batch, { store: ctx.store, client: null, config: configSchema.parse({ approvals: ONE }), clock: systemClock });
    expect(before?.duplicates_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(await allow(batch)).toMatchObject({ kind: 'allowed' });
    const preview = await previewBatch(batch, { store: ctx.store, client: null, config: configSchema.parse({ approvals: ONE }), clock: systemClock });
    expect(preview?.possible_duplicates).toEqual([expect.objectContaining({ external_id: 'INV-2', allowed_by: 'Grace Hopper', allowed_reason: 'a second invoice' })]);
    expect(renderPreview(preview as Preview, batch)).toMatch(/line 2 {2}INV-2 {2}twin of batch \S+ line 2 \(external_id INV-1, paid, [\d-]+\) {2}allowed by Grace Hopper: a second invoice/);
    // The allowance changed what is signed: the statement carries the digest with it.
    expect(preview?.duplicates_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(preview?.duplicates_sha256).not.toBe(before?.duplicates_sha256);
    const statement = await approve(ctx, batch);
    expect(statement.duplicates_sha256).toBe(preview?.duplicates_sha256);
    await ctx.run({ approvals: ONE }, 5000);
    expect(await ctx.store.rowBySubmittedExternalId('INV-2')).toMatchObject({ phase: 'final', state: 'paid' });
    expect(await ctx.store.rowBySubmittedExternalId('INV-3')).toMatchObject({ phase: 'final', state: 'paid' });
  });

  it('allow after approval is refused; an allowance written to the database after it holds the batch, and the row is never sent', async () => {
    ctx = await engineContext();
    const batch = await heldUnderApproval(ctx);
    await approve(ctx, batch);
    expect(await allow(batch)).toMatchObject({ kind: 'refused', why: expect.stringMatching(/under approval/) });
    // What paybatch allow would do, done anyway (a write to the database by someone without an approver's key).
    const line = (await ctx.store.rowBySubmittedExternalId('INV-2'))?.line as number;
    expect(await ctx.store.allowDuplicate(batch, line, { person: 'Mallory', reason: 'trust me', at: new Date().toISOString() })).toBe(true);
    await ctx.run({ approvals: ONE }, 1000);
    expect(sentIds(ctx)).not.toContain('INV-2');
    // Ended not sent with the batch's hold: INV-3, signed for and untouched, may have been paid before the hold.
    expect(await rowOf(ctx, batch, 'INV-2')).toMatchObject({ phase: 'not_sent', outcome: 'approval_invalid' });
    const held = await ctx.store.batch(batch);
    expect(held).toMatchObject({ approval: 'held' });
    expect(held?.approval_reason).toMatch(/duplicates_sha256: approved "[0-9a-f]{64}", now "[0-9a-f]{64}"/);
  });

  it('a held row moved to ready in the database after approval, with no allowance, is not sent: the batch is held', async () => {
    ctx = await engineContext();
    const batch = await heldUnderApproval(ctx);
    await approve(ctx, batch);
    sqliteOf(ctx.store).prepare("UPDATE rows SET phase = 'ready', outcome = NULL, outcome_detail = NULL WHERE batch_id = ? AND external_id = 'INV-2'").run(batch);
    await ctx.run({ approvals: ONE }, 1000);
    expect(sentIds(ctx)).not.toContain('INV-2');
    // Ended not sent with the batch's hold: INV-3, signed for and untouched, may have been paid before the hold.
    expect(await rowOf(ctx, batch, 'INV-2')).toMatchObject({ phase: 'not_sent', outcome: 'approval_invalid' });
    const held = await ctx.store.batch(batch);
    expect(held).toMatchObject({ approval: 'held' });
    expect(held?.approval_reason).toMatch(/held as a possible duplicate, not allowed, when the approvers signed/);
  });
});
