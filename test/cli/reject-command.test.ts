/**
 * Rejections on the record: `paybatch reject` writes who and why to the audit
 * trail and ends the batch; a rejection row inserted by hand in SQLite (by a
 * name not in the policy, or by an approver but with no audit entry) does not
 * end its batch: it is held for a person, the reason naming who. The
 * configuration recorded in the trail names each approver's key fingerprint,
 * so a key file whose contents change is a recorded change. Real child
 * processes of the built binary, the sandbox over HTTP, a real SQLite file.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
    mkdirSync(join(dir, 'keys'));
    const person = (name: string, role: string) => {
      writeFileSync(join(dir, 'keys', `${name}.pub`), generateKeys().publicPem);
      return { role, public_key_file: join(dir, 'keys', `${name}.pub`) };
    };
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({
      intake: FAST_INTAKE, engine: FAST_ENGINE,
      approvals: { enabled: true, inbox_submitter: 'inbox', people: { ada: person('ada', 'approver'), grace: person('grace', 'approver'), inbox: person('inbox', 'submitter') }, rules: [{ approvers: 1 }] },
    }));
    for (const [file, name] of [['templates/gbr-bank.csv', 'real.csv'], ['templates/eur-iban-bank.csv', 'stranger.csv'], ['templates/nga-cash.csv', 'unrecorded.csv']]) {
      copyFileSync(template(file as string), join(home, 'inbox', name as string));
      writeFileSync(join(home, 'inbox', `${name}.done`), '');
    }
    // Runs until the three files are taken in (one run under load may end before a file is stable).
    let requested = '';
    const batchOf = (file: string): string | undefined => new RegExp(`approval requested: batch (B\\S+), file ${file.replace('.', '\\.')}`).exec(requested)?.[1];
    for (let attempt = 0; attempt < 10 && !['real.csv', 'stranger.csv', 'unrecorded.csv'].every(batchOf); attempt++) {
      const waiting = await runCli(['run', '--wait', '1s'], { env });
      expect(waiting.code, waiting.stderr).toBe(0);
      requested += waiting.stderr;
    }
    const [real, stranger, unrecorded] = [batchOf('real.csv'), batchOf('stranger.csv'), batchOf('unrecorded.csv')] as [string, string, string];
    expect([real, stranger, unrecorded].every(Boolean), requested).toBe(true);

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

    // grace's key file now holds another key: the next start records the configuration again, with its fingerprint.
    writeFileSync(join(dir, 'keys', 'grace.pub'), generateKeys().publicPem);
    expect([0, 3]).toContain((await runCli(['run', '--wait', '1s'], { env })).code);
    const keysRecorded = (await runCli(['audit', 'export'], { env })).stdout.trim().split('\n').map((l) => JSON.parse(l) as { action: string; details: { configuration?: { approval_keys?: Record<string, string> } } })
      .filter((e) => e.action === 'configuration' && e.details.configuration?.approval_keys).map((e) => e.details.configuration?.approval_keys as Record<string, string>);
    expect(keysRecorded).toHaveLength(2);
    const [before, now] = keysRecorded as [Record<string, string>, Record<string, string>];
    expect(Object.keys(now).sort()).toEqual(['ada', 'grace', 'inbox']);
    expect(Object.values(now).every((f) => /^SHA256:[A-Za-z0-9+/]{43}$/.test(f))).toBe(true);
    expect([now.ada === before.ada, now.grace === before.grace]).toEqual([true, false]);
  });
});
