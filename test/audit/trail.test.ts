/**
 * The audit trail of a real run, tampered with in SQLite as someone with write
 * access to the database would: `paybatch audit verify` names the first entry
 * edited, deleted, inserted or reordered, and a head printed in a batch summary
 * catches a rewrite of the whole history. `audit export` writes JSON lines.
 */
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chained, GENESIS } from '../../src/audit/chain.js';
import type { AuditEntry } from '../../src/audit/chain.js';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';
import { runCli } from '../helpers/cli.js';
import { FAST_ENGINE, FAST_INTAKE, FAST_SANDBOX, template } from '../helpers/engine.js';

describe('the audit trail of a run, and tampering with it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-audit-'));
  const home = join(dir, 'ws');
  let sandbox: RunningSandbox;
  let env: NodeJS.ProcessEnv;
  let pristine: string;
  beforeAll(async () => {
    sandbox = await startSandbox({ config: FAST_SANDBOX });
    env = { PAYBATCH_HOME: home, PAYBATCH_BASE_URL: sandbox.url, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET: sandbox.apiSecret };
    expect((await runCli(['run', '--wait', '1s'], { env })).code).toBe(0);
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ intake: FAST_INTAKE, engine: FAST_ENGINE }));
    copyFileSync(template('templates/gbr-bank.csv'), join(home, 'inbox', 'gbr.csv'));
    writeFileSync(join(home, 'inbox', 'gbr.csv.done'), '');
    expect((await runCli(['run', '--wait', '5s'], { env })).code).toBe(0);
    pristine = join(dir, 'pristine.db');
    copyFileSync(join(home, 'paybatch.db'), pristine);
  }, 30_000);
  afterAll(async () => {
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh copy of the untouched database, changed by `tamper`, then verified by the CLI. */
  async function verifyAfter(tamper: (db: Database.Database) => void, extra: string[] = []) {
    copyFileSync(pristine, join(home, 'paybatch.db'));
    const db = new Database(join(home, 'paybatch.db'));
    tamper(db);
    db.close();
    return runCli(['audit', 'verify', ...extra], { env });
  }
  const entries = (): AuditEntry[] => {
    const db = new Database(pristine, { readonly: true });
    try {
      return db.prepare('SELECT * FROM audit_log ORDER BY seq').all() as AuditEntry[];
    } finally {
      db.close();
    }
  };

  it('records the run: configuration, intake, each create, fund and state learned, chained; verify says intact', async () => {
    const all = entries();
    const actions = new Set(all.map((e) => e.action));
    for (const action of ['configuration', 'intake_accepted', 'create_requested', 'fund_requested', 'state_learned']) expect(actions).toContain(action);
    expect(all.filter((e) => e.action === 'fund_requested').map((e) => JSON.parse(e.details).currency)).toEqual(['USD', 'USD']);
    const result = await verifyAfter(() => {});
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^audit trail intact: ${all.length} entries, head ${all.length}:[0-9a-f]{64}\\n$`));
  });

  it('names an edited entry', async () => {
    const target = entries().find((e) => e.action === 'fund_requested') as AuditEntry;
    const result = await verifyAfter((db) => db.prepare('UPDATE audit_log SET details = ? WHERE seq = ?').run(target.details.replace(/"amount":"\d+"/, '"amount":"1"'), target.seq));
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(`audit trail BROKEN at entry ${target.seq}: entry ${target.seq} (fund_requested ${target.subject}) was edited: its content no longer matches its hash\n`);
  });

  it('names a deleted entry', async () => {
    const result = await verifyAfter((db) => db.prepare('DELETE FROM audit_log WHERE seq = 4').run());
    expect(result.stdout).toBe('audit trail BROKEN at entry 4: entry 4 was deleted: entry 5 chains from an entry no longer there\n');
  });

  it('names an inserted entry, even one whose own hash is right', async () => {
    const all = entries();
    const result = await verifyAfter((db) => {
      // Made room at 6 by moving the later entries up one; the new entry chains correctly from entry 5.
      for (const e of [...all].reverse()) if (e.seq >= 6) db.prepare('UPDATE audit_log SET seq = ? WHERE seq = ?').run(e.seq + 1, e.seq);
      const forged = chained((all[4] as AuditEntry).hash, { at: (all[4] as AuditEntry).at, actor: 'ada', action: 'approved', subject: 'B-forged', details: {} });
      db.prepare('INSERT INTO audit_log (seq, at, actor, action, subject, details, prev_hash, hash) VALUES (6, @at, @actor, @action, @subject, @details, @prev_hash, @hash)').run(forged);
    });
    expect(result.stdout).toBe('audit trail BROKEN at entry 6: entry 6 (approved B-forged) was inserted: the entry after it chains from the one before it\n');
  });

  it('names reordered entries', async () => {
    const all = entries();
    const result = await verifyAfter((db) => {
      db.prepare('UPDATE audit_log SET seq = -1 WHERE seq = 7').run();
      db.prepare('UPDATE audit_log SET seq = 7 WHERE seq = 8').run();
      db.prepare('UPDATE audit_log SET seq = 8 WHERE seq = -1').run();
    });
    const moved = all[7] as AuditEntry;
    expect(result.stdout).toBe(`audit trail BROKEN at entry 7: entry 7 (${moved.action} ${moved.subject}) is out of order: it chains from entry 8, which comes after it\n`);
  });

  it('a whole history rewritten consistently passes on its own, and is caught by the head a batch summary printed', async () => {
    const [summaryFile] = readdirSync(join(home, 'outbox')).filter((f) => f.endsWith('.summary.json'));
    const head = JSON.parse(readFileSync(join(home, 'outbox', summaryFile as string), 'utf8')).audit_chain_head as { seq: number; hash: string };
    expect(head.seq).toBeGreaterThan(0);
    const rewritten = await verifyAfter((db) => {
      const all = db.prepare('SELECT * FROM audit_log ORDER BY seq').all() as AuditEntry[];
      let prev = GENESIS;
      for (const e of all) {
        const details = e.action === 'fund_requested' ? JSON.parse(e.details.replace(/"amount":"\d+"/, '"amount":"1"')) as Record<string, unknown> : JSON.parse(e.details) as Record<string, unknown>;
        const again = chained(prev, { at: e.at, actor: e.actor, action: e.action, subject: e.subject, details });
        db.prepare('UPDATE audit_log SET details = ?, prev_hash = ?, hash = ? WHERE seq = ?').run(again.details, again.prev_hash, again.hash, e.seq);
        prev = again.hash;
      }
    }, ['--head', `${head.seq}:${head.hash}`]);
    expect(rewritten.code).toBe(1);
    expect(rewritten.stdout).toMatch(new RegExp(`but the head ${head.seq}:${head.hash} is not in it: the history was rewritten`));
    copyFileSync(pristine, join(home, 'paybatch.db'));
    const intact = await runCli(['audit', 'verify', '--head', `${head.seq}:${head.hash}`], { env });
    expect(intact.stdout).toMatch(new RegExp(`; the head ${head.seq} printed earlier is in it\\n$`));
  });

  it('exports a period as JSON lines', async () => {
    copyFileSync(pristine, join(home, 'paybatch.db'));
    const all = entries();
    const result = await runCli(['audit', 'export', '--from', '2000-01-01', '--to', '2999-01-01'], { env });
    const lines = result.stdout.trim().split('\n').map((l) => JSON.parse(l) as AuditEntry & { details: unknown });
    expect(lines.map((l) => l.seq)).toEqual(all.map((e) => e.seq));
    expect(lines[0]).toMatchObject({ action: 'configuration', hash: all[0]?.hash });
    expect((await runCli(['audit', 'export', '--from', '2999-01-01'], { env })).stdout).toBe('');
    expect((await runCli(['audit', 'export', '--from', 'soon'], { env })).code).toBe(64);
  });
});
