/**
 * Rejections on the record: `paybatch reject` writes who and why to the audit
 * trail and ends the batch; a rejection row inserted by hand in SQLite (by a
 * name not in the policy, or by an approver but with no audit entry) does not
 * end its batch: it is held for a person, the reason naming who. Real child
 * processes of the built binary, the sandbox over HTTP, a real SQLite file.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeys } from '../../src/approvals/keys.js';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import { runCli } from '../helpers/cli.js';
import { FAST_ENGINE, FAST_INTAKE, FAST_SANDBOX, template } from '../helpers/engine.js';

describe('rejections on the record', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-reject-cli-'));
  const home = join(dir, 'ws');
  let sandbox: RunningSandbox;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    sandbox = await startSandbox({ config: FAST_SANDBOX });
    env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: sandbox.url, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET: sandbox.apiSecret };
  });
  afterAll(async () => {
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('paybatch reject ends its batch with who and why on the trail; rejections inserted by hand hold theirs', { timeout: 90_000 }, async () => {
    expect((await runCli(['run', '--wait', '1s'], { env })).code).toBe(0);
    const person = (role: string) => ({ role, public_key: generateKeys().publicPem });
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({
      intake: FAST_INTAKE, engine: FAST_ENGINE,
      approvals: { enabled: true, inbox_submitter: 'inbox', people: { ada: person('approver'), grace: person('approver'), inbox: person('submitter') }, rules: [{ approvers: 1 }] },
    }));
    for (const [file, name] of [['templates/gbr-bank.csv', 'real.csv'], ['templates/eur-iban-bank.csv', 'stranger.csv'], ['templates/nga-cash.csv', 'unrecorded.csv']]) {
      copyFileSync(template(file as string), join(home, 'inbox', name as string));
      writeFileSync(join(home, 'inbox', `${name}.done`), '');
    }
    const waiting = await runCli(['run', '--wait', '1s'], { env });
    expect(waiting.code, waiting.stderr).toBe(0);
    const batchOf = (file: string): string => new RegExp(`approval requested: batch (B\\S+), file ${file.replace('.', '\\.')}`).exec(waiting.stderr)?.[1] as string;
    const [real, stranger, unrecorded] = [batchOf('real.csv'), batchOf('stranger.csv'), batchOf('unrecorded.csv')];
    expect([real, stranger, unrecorded].every(Boolean), waiting.stderr).toBe(true);

    const rejected = await runCli(['reject', real, '--reason', 'wrong month', '--as', 'grace'], { env });
    expect(rejected.code, rejected.stderr).toBe(0);
    const db = new Database(join(home, 'paybatch.db'));
    const insert = db.prepare("INSERT INTO approvals (batch_id, person, decision, reason, at) VALUES (?, ?, 'reject', 'forged', ?)");
    insert.run(stranger, 'mallory', new Date().toISOString());
    insert.run(unrecorded, 'ada', new Date().toISOString());
    db.close();

    const after = await runCli(['run', '--wait', '2s'], { env });
    expect(after.code === 0 || after.code === 3, after.stderr).toBe(true);
    const results = (batch: string) => parse(readFileSync(join(home, 'outbox', `${batch}.results.csv`)), { columns: true }) as Record<string, string>[];
    expect(results(real).every((r) => r.state === 'approval_rejected' && r.state_reason === 'rejected by grace: wrong month')).toBe(true);
    const held = (batch: string) => results(batch).map((r) => [r.state, r.state_reason_code]);
    for (const batch of [stranger, unrecorded]) expect(new Set(held(batch).map((r) => r.join()))).toEqual(new Set(['approval_invalid,approval_invalid']));
    expect(results(stranger)[0]?.state_reason).toMatch(/^a rejection by mallory does not count \(mallory is not an approver or an admin of the approval policy\): kept other than by paybatch reject, so the batch is held for a person/);
    expect(results(unrecorded)[0]?.state_reason).toMatch(/^a rejection by ada does not count \(it has no entry in the audit trail\)/);
    expect([...sandbox.store.allTransactions()]).toEqual([]);

    const trail = (await runCli(['audit', 'export'], { env })).stdout.trim().split('\n').map((l) => JSON.parse(l) as { actor: string; action: string; subject: string; details: unknown });
    expect(trail.filter((e) => e.action === 'rejected')).toEqual([expect.objectContaining({ actor: 'grace', subject: real, details: { reason: 'wrong month' } })]);
    expect((await runCli(['audit', 'verify'], { env })).stdout).toMatch(/^audit trail intact/);
  });
});
