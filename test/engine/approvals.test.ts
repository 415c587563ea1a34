/**
 * Four eyes before money moves, against the sandbox over HTTP with real Ed25519
 * keys and a real SQLite file: nothing is created at the service before the
 * approvals verify; the submitter cannot approve; a 2-of-N rule; expiry and
 * rejection end the batch with nothing sent; an approval edited or inserted in
 * the database, or a file changed after approval, holds the batch; the approved
 * ceiling is the budget.
 */
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateKeys, signBytes, privateKeyFrom } from '../../src/approvals/keys.js';
import { approvalPolicy } from '../../src/approvals/policy.js';
import { statementBytes } from '../../src/approvals/statement.js';
import type { Statement } from '../../src/approvals/statement.js';
import type { ApprovalPolicy } from '../../src/approvals/verify.js';
import { systemClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import { ApprovalGate } from '../../src/engine/approval-gate.js';
import { approveBatch, rejectBatch } from '../../src/engine/approve.js';
import type { EngineContext } from '../helpers/engine.js';
import { debitsPerTransaction, engineContext, template } from '../helpers/engine.js';

const keys = { ada: generateKeys(), grace: generateKeys(), inbox: generateKeys(), mallory: generateKeys() };

/** Ada and Grace approve; the inbox submits; any batch needs one approver, 10,000.00 USD or more needs two. */
const APPROVALS = {
  enabled: true,
  people: {
    ada: { role: 'approver', public_key: keys.ada.publicPem },
    grace: { role: 'approver', public_key: keys.grace.publicPem },
    inbox: { role: 'submitter', public_key: keys.inbox.publicPem },
  },
  inbox_submitter: 'inbox',
  rules: [{ approvers: 1 }, { currency: 'USD', total_at_least: '10000.00', approvers: 2 }],
  estimate_rates: { 'USD/GBP': '0.7912' },
};

describe('four-eyes approval before money moves', () => {
  let ctx: EngineContext;
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-approvals-'));
  const keyFile = (name: keyof typeof keys): string => join(dir, `${name}.key`);
  let policy: ApprovalPolicy;
  beforeAll(() => {
    for (const [name, pair] of Object.entries(keys)) writeFileSync(join(dir, `${name}.key`), pair.privatePem, { mode: 0o600 });
    policy = approvalPolicy(configSchema.parse({ approvals: APPROVALS }).approvals, dir) as ApprovalPolicy;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(async () => ctx.stop());

  const config = (extra: Record<string, unknown> = {}) => ({ approvals: { ...APPROVALS, ...extra } });
  const gate = () => new ApprovalGate(policy, ctx.store, systemClock, APPROVALS.estimate_rates);
  const approve = (batch: string, as: keyof typeof keys, ceiling: Record<string, string> = {}) =>
    approveBatch({ batch, as, keyFile: keyFile(as), ceiling }, { store: ctx.store, gate: gate(), policy, clock: systemClock, marginPercent: 3 });
  const sentToService = () => [...ctx.sandbox.store.allTransactions()].length;

  it('sends nothing before approval; the submitter cannot approve; one approval releases a small batch, paid once', async () => {
    ctx = await engineContext();
    ctx.drop(template('templates/gbr-bank.csv'));
    const first = await ctx.run(config(), 1500);
    const batch = first.batches[0]?.batch as string;
    expect(first.batches[0]?.by_state).toEqual({ not_sent_yet: 2 });
    expect(sentToService()).toBe(0);
    expect((await ctx.store.batch(batch))?.approval).toBe('awaiting');
    const { readStatus, renderStatus } = await import('../../src/engine/status.js');
    expect(renderStatus(await readStatus(ctx.store, systemClock, batch))).toMatch(new RegExp(`approval: awaiting: paybatch preview ${batch}`));
    expect(ctx.events.some((e) => e.event === 'approval_requested')).toBe(true);
    await expect(approve(batch, 'inbox')).rejects.toThrow(/inbox submitted batch .* and cannot approve it/);
    await expect(approveBatch({ batch, as: 'ada', keyFile: keyFile('grace'), ceiling: {} }, { store: ctx.store, gate: gate(), policy, clock: systemClock, marginPercent: 3 })).rejects.toThrow(/is not ada's key/);
    const { statement, verdict } = await approve(batch, 'ada');
    expect(verdict).toEqual({ kind: 'approved', approvers: ['ada'] });
    expect(statement).toMatchObject({ batch, rows: 2, totals: { GBP: '156045' } });
    const paid = await ctx.run(config());
    expect(paid.batches[0]?.by_state).toEqual({ paid: 2 });
    expect([...debitsPerTransaction(ctx.sandbox).values()]).toEqual([1, 1]);
  });

  it('a 2-of-N rule: 10,000.00 USD needs two distinct approvers', async () => {
    ctx = await engineContext();
    ctx.drop(template('templates/global-usd-bank.csv')); // 5000.00 + 75.10 USD
    const big = JSON.stringify(APPROVALS.rules);
    const rules = JSON.parse(big.replace('10000.00', '5000.00')) as unknown[];
    const local = approvalPolicy(configSchema.parse({ approvals: { ...APPROVALS, rules } }).approvals, dir) as ApprovalPolicy;
    const run = await ctx.run(config({ rules }), 1000);
    const batch = run.batches[0]?.batch as string;
    const twice = (as: 'ada' | 'grace') => approveBatch({ batch, as, keyFile: keyFile(as), ceiling: {} }, { store: ctx.store, gate: new ApprovalGate(local, ctx.store, systemClock), policy: local, clock: systemClock, marginPercent: 3 });
    expect((await twice('ada')).verdict).toEqual({ kind: 'waiting', reason: 'awaiting approval: 1 of 2 approvals' });
    await expect(twice('ada')).rejects.toThrow(/already approved/);
    expect((await ctx.run(config({ rules }), 1000)).batches[0]?.by_state).toEqual({ not_sent_yet: 2 });
    expect(sentToService()).toBe(0);
    expect((await twice('grace')).verdict).toEqual({ kind: 'approved', approvers: ['ada', 'grace'] });
    expect((await ctx.run(config({ rules }))).batches[0]?.by_state).toEqual({ paid: 2 });
  });

  it('an expired request and a rejected batch end with their reason, nothing sent', async () => {
    // The helper's clock (the system's time) is moved on by the test instead of waited for.
    ctx = await engineContext();
    ctx.drop(template('templates/gbr-bank.csv'), 'expiring.csv');
    ctx.drop(template('templates/eur-iban-bank.csv'), 'rejected.csv');
    const first = await ctx.run(config({ expires_after_ms: 1500 }), 200);
    const rejected = first.batches.find((b) => b.file === 'rejected.csv')?.batch as string;
    await rejectBatch({ batch: rejected, as: 'grace', reason: 'wrong month' }, { store: ctx.store, policy, clock: systemClock });
    ctx.advanceClock(1600);
    const after = await ctx.run(config({ expires_after_ms: 1500 }), 1000);
    const results = async (file: string) => ctx.results(after.batches.find((b) => b.file === file)?.batch as string);
    expect((await results('expiring.csv')).map((r) => [r.state, r.state_reason_code])).toEqual([['approval_expired', 'approval_expired'], ['approval_expired', 'approval_expired']]);
    expect((await results('rejected.csv'))[0]).toMatchObject({ state: 'approval_rejected', state_reason: 'rejected by grace: wrong month' });
    expect(sentToService()).toBe(0);
    // Their files are done with: in failed/ with a report, not left in processing/ to be taken again at the next start.
    expect(readdirSync(ctx.workspace.folders.processing)).toEqual([]);
    const failed = readdirSync(ctx.workspace.folders.failed);
    expect(failed.filter((f) => f.endsWith('.csv')).map((f) => f.replace(/^.*--/, '')).sort()).toEqual(['expiring.csv', 'rejected.csv']);
    const report = readFileSync(join(ctx.workspace.folders.failed, failed.find((f) => f.endsWith('--rejected.csv.report.txt')) as string), 'utf8');
    expect(report).toMatch(new RegExp(`^rejected\\.csv: batch ${rejected} ended before anything of it was sent: rejected by grace: wrong month\\.\nNothing of this file was sent`));
    expect((await ctx.run(config({ expires_after_ms: 1500 }), 200)).batches).toEqual([]);
  });

  it('an approval edited, or inserted, in SQLite does not verify: the batch is held, nothing sent', async () => {
    ctx = await engineContext();
    ctx.drop(template('templates/gbr-bank.csv'), 'edited.csv');
    ctx.drop(template('templates/nga-cash.csv'), 'inserted.csv');
    const first = await ctx.run(config(), 200);
    const edited = first.batches.find((b) => b.file === 'edited.csv')?.batch as string;
    const inserted = first.batches.find((b) => b.file === 'inserted.csv')?.batch as string;
    await approve(edited, 'ada');
    const db = new Database(ctx.workspace.database);
    // Edited: the ceiling raised by hand after ada signed.
    const row = db.prepare('SELECT id, statement FROM approvals WHERE batch_id = ?').get(edited) as { id: number; statement: string };
    const statement = JSON.parse(row.statement) as Statement;
    db.prepare('UPDATE approvals SET statement = ? WHERE id = ?').run(JSON.stringify({ ...statement, ceiling: { USD: '99999999' } }), row.id);
    // Inserted: a statement for the other batch, "signed" by a key that is not ada's.
    const facts = await gate().facts((await ctx.store.batch(inserted))!);
    const forged: Statement = { ...facts.expected, ceiling: { USD: '99999999' }, expires_at: new Date(Date.now() + 3_600_000).toISOString() };
    const mallory = privateKeyFrom(keys.mallory.privatePem);
    if (typeof mallory === 'string') throw new Error(mallory);
    db.prepare("INSERT INTO approvals (batch_id, person, decision, statement, signature, at) VALUES (?, 'ada', 'approve', ?, ?, ?)")
      .run(inserted, JSON.stringify(forged), signBytes(mallory, statementBytes(forged)), new Date().toISOString());
    db.prepare("UPDATE batches SET approval = 'approved' WHERE id = ?").run(inserted);
    db.close();
    const after = await ctx.run(config(), 1000);
    for (const [batch, why] of [[edited, /not signed by ada's key/], [inserted, /not signed by ada's key/]] as const) {
      const rows = await ctx.results(batch);
      expect(rows.every((r) => r.state === 'approval_invalid')).toBe(true);
      expect(rows[0]?.state_reason).toMatch(why);
    }
    expect(after.batches.every((b) => b.need_person > 0)).toBe(true);
    expect(sentToService()).toBe(0);
  });

  it('a file changed after approval is not sent; the approved ceiling is the budget', async () => {
    ctx = await engineContext();
    ctx.drop(template('templates/gbr-bank.csv'), 'changed.csv');
    ctx.drop(template('templates/global-usd-bank.csv'), 'capped.csv'); // 5000.00 + 75.10 USD
    const first = await ctx.run(config({ rules: [{ approvers: 1 }] }), 200);
    const changed = first.batches.find((b) => b.file === 'changed.csv')?.batch as string;
    const capped = first.batches.find((b) => b.file === 'capped.csv')?.batch as string;
    await approve(changed, 'ada');
    const claimed = readdirSync(ctx.workspace.folders.processing).find((f) => f.endsWith('--changed.csv')) as string;
    appendFileSync(join(ctx.workspace.folders.processing, claimed), 'GBR-2026-0099,bank,USD,GBP,9999.00\n');
    // Approved for 5,000.00 USD at most: the second row (75.10) would go over it.
    await approve(capped, 'ada', { USD: '5000.00' });
    await ctx.run(config({ rules: [{ approvers: 1 }] }));
    expect([...ctx.sandbox.store.allTransactions()].some((t) => t.external_id.startsWith('GBR-'))).toBe(false);
    const rows = await ctx.results(capped);
    expect(rows.map((r) => r.state_reason_code)).toEqual(['', 'over_budget']);
    expect(rows[1]?.state_reason).toMatch(/over its budget 5,000\.00 USD/);
    expect(debitsPerTransaction(ctx.sandbox).size).toBe(1);
  });
});
