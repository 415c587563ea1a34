/**
 * An approval is bound to the key it was signed with: its audit entry shows the
 * key's fingerprint, and a person's public key file whose contents are swapped
 * for another key afterwards holds the open batch, naming the person and both
 * fingerprints. An approval row signed with the right key but kept other than
 * by `paybatch approve` (no audit entry) holds the batch too. Real SQLite, the
 * sandbox over HTTP, real Ed25519 keys and key files.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { generateKeys, keyFingerprint, privateKeyFrom, publicKeyFrom, signBytes } from '../../src/approvals/keys.js';
import type { KeyObject } from 'node:crypto';
import { approvalPolicy } from '../../src/approvals/policy.js';
import { statementBytes } from '../../src/approvals/statement.js';
import type { ApprovalPolicy } from '../../src/approvals/verify.js';
import { systemClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import { ApprovalGate } from '../../src/engine/approval-gate.js';
import { approveBatch, statementToSign } from '../../src/engine/approve.js';
import type { EngineContext } from '../helpers/engine.js';
import { engineContext, template } from '../helpers/engine.js';

const keys = { ada: generateKeys(), inbox: generateKeys(), mallory: generateKeys() };
const fingerprint = (pem: string): string => keyFingerprint(publicKeyFrom(pem) as KeyObject);

describe('approvals bound to their keys', () => {
  let ctx: EngineContext;
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-approval-keys-'));
  const adaPublic = join(dir, 'ada.pub');
  const adaPrivate = join(dir, 'ada.key');
  const approvals = {
    enabled: true,
    people: { ada: { role: 'approver', public_key_file: adaPublic }, inbox: { role: 'submitter', public_key: keys.inbox.publicPem } },
    inbox_submitter: 'inbox',
    rules: [{ approvers: 1 }],
  };
  const config = { approvals };
  /** The policy as a process starting now reads it: from the key files as they are. */
  const policyNow = (): ApprovalPolicy => approvalPolicy(configSchema.parse(config).approvals, dir) as ApprovalPolicy;
  const deps = () => {
    const policy = policyNow();
    return { store: ctx.store, gate: new ApprovalGate(policy, ctx.store, systemClock), policy, clock: systemClock, marginPercent: 3 };
  };
  /** The batch of the file dropped, once a run has taken it in (a run under load may end before the file is stable). */
  const takenIn = async (): Promise<string> => {
    for (let attempt = 0; attempt < 50; attempt++) {
      const batch = (await ctx.run(config, 200)).batches[0]?.batch;
      if (batch) return batch;
    }
    throw new Error('the file dropped was not taken in after 50 runs');
  };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(async () => ctx.stop());

  it('the approval\'s audit entry shows the key\'s fingerprint; the key file swapped later holds the open batch, naming ada and both fingerprints', async () => {
    writeFileSync(adaPublic, keys.ada.publicPem);
    writeFileSync(adaPrivate, keys.ada.privatePem, { mode: 0o600 });
    ctx = await engineContext();
    ctx.drop(template('templates/gbr-bank.csv'));
    const batch = await takenIn();
    expect((await approveBatch({ batch, as: 'ada', keyFile: adaPrivate, ceiling: { USD: '2500.00' } }, deps())).verdict.kind).toBe('approved');
    const [entry] = await ctx.store.decisionEntries(batch);
    expect(entry).toMatchObject({ actor: 'ada', action: 'approved', version: 2 });
    expect(JSON.parse(entry?.details ?? '{}')).toMatchObject({ key_fingerprint: fingerprint(keys.ada.publicPem) });
    expect(fingerprint(keys.ada.publicPem)).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);

    // Someone with write access to the configuration folder puts another key's contents in ada's file.
    writeFileSync(adaPublic, keys.mallory.publicPem);
    const after = await ctx.run(config, 1000);
    expect(after.batches[0]?.need_person).toBeGreaterThan(0);
    const rows = await ctx.results(batch);
    expect(rows.every((r) => r.state === 'approval_invalid')).toBe(true);
    expect(rows[0]?.state_reason).toContain(`ada's public key changed since ada approved: approved with the key ${fingerprint(keys.ada.publicPem)}, the key configured now is ${fingerprint(keys.mallory.publicPem)}`);
    expect([...ctx.sandbox.store.allTransactions()]).toEqual([]);
  });

  it('an approval row signed with ada\'s key but kept other than by paybatch approve (no audit entry) holds the batch', async () => {
    writeFileSync(adaPublic, keys.ada.publicPem);
    ctx = await engineContext();
    ctx.drop(template('templates/gbr-bank.csv'));
    const batch = await takenIn();
    const statement = await statementToSign({ batch, as: 'ada', ceiling: { USD: '2500.00' } }, deps());
    const signature = signBytes(privateKeyFrom(keys.ada.privatePem) as KeyObject, statementBytes(statement));
    const db = new Database(ctx.workspace.database);
    db.prepare("INSERT INTO approvals (batch_id, person, decision, statement, signature, at) VALUES (?, 'ada', 'approve', ?, ?, ?)")
      .run(batch, JSON.stringify(statement), signature, new Date().toISOString());
    db.close();
    await ctx.run(config, 1000);
    const rows = await ctx.results(batch);
    expect(rows.every((r) => r.state === 'approval_invalid')).toBe(true);
    expect(rows[0]?.state_reason).toMatch(/the approval by ada has no entry in the audit trail \(kept other than by paybatch approve\)/);
    expect([...ctx.sandbox.store.allTransactions()]).toEqual([]);
  });
});
