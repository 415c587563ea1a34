/**
 * The audit hash reads one way only: two entries whose fields differ only by
 * where a newline sits hash differently, and such a move, made in SQLite by
 * someone with write access, breaks the chain for `paybatch audit verify`, with
 * `--head` too. A person's name with a control character never enters the
 * trail: the command line refuses it (exit 64).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { chained, GENESIS } from '../../src/audit/chain.js';
import type { AuditEntry } from '../../src/audit/chain.js';
import { personNameProblem } from '../../src/audit/names.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { runCli } from '../helpers/cli.js';

const AT = '2026-03-02T09:00:00.000Z';

describe('an audit entry hashes one way only', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-audit-encoding-'));
  const home = join(dir, 'ws');
  const env = { PAYBATCH_HOME: home };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('two entries that differ only by where a newline sits hash differently', () => {
    const a = chained(GENESIS, { at: AT, actor: 'ada', action: 'preview', subject: 'B-1\nnote', details: {} });
    const b = chained(GENESIS, { at: AT, actor: 'ada\npreview', action: 'B-1', subject: 'note', details: {} });
    expect(a.hash).not.toBe(b.hash);
  });

  it('a newline moved between two fields of an entry breaks the chain, with --head too', { timeout: 30_000 }, async () => {
    mkdirSync(home, { recursive: true });
    const store = SqliteStore.open(join(home, 'paybatch.db'));
    await store.appendAudit({ at: AT, actor: 'paybatch', action: 'configuration', subject: 'paybatch.config.json', details: {} });
    await store.appendAudit({ at: AT, actor: 'ada', action: 'preview', subject: 'B-1\nnote', details: { rows: 2 } });
    await store.appendAudit({ at: AT, actor: 'paybatch', action: 'report_written', subject: 'r', details: {} });
    const head = await store.auditHead();
    await store.close();
    const intact = await runCli(['audit', 'verify', '--head', `${head.seq}:${head.hash}`], { env });
    expect(intact.stdout, intact.stderr).toMatch(/^audit trail intact: 3 entries/);

    const db = new Database(join(home, 'paybatch.db'));
    const before = db.prepare('SELECT * FROM audit_log WHERE seq = 2').get() as AuditEntry;
    // The newline of the subject moved to the end of the actor: the fields joined by newlines are the same bytes.
    db.prepare('UPDATE audit_log SET actor = ?, action = ?, subject = ? WHERE seq = 2').run('ada\npreview', 'B-1', 'note');
    db.close();
    expect(before.subject).toBe('B-1\nnote');
    const plain = await runCli(['audit', 'verify'], { env });
    expect(plain.code).toBe(1);
    expect(plain.stdout).toMatch(/^audit trail BROKEN at entry 2: entry 2 \(B-1 note\) was edited: its content no longer matches its hash/);
    const withHead = await runCli(['audit', 'verify', '--head', `${head.seq}:${head.hash}`], { env });
    expect(withHead.code).toBe(1);
    expect(withHead.stdout).toMatch(/^audit trail BROKEN at entry 2/);
  });

  it('names a control character in a name, and passes an ordinary one', () => {
    expect(personNameProblem('ada')).toBeNull();
    expect(personNameProblem('Ada Lovelace-Byron')).toBeNull();
    expect(personNameProblem('ada\npreview')).toBe('a name cannot contain control characters (U+000A at character 4)');
    expect(personNameProblem('ada\u202e')).toMatch(/U\+202E at character 4/);
    expect(personNameProblem('\u001b[31mada')).toMatch(/U\+001B at character 1/);
  });

  it('refuses --as with a control character (exit 64), before anything is done', { timeout: 60_000 }, async () => {
    for (const args of [
      ['approve', 'B-1', '--key', join(dir, 'ada.key'), '--as', 'ada\nrejected'],
      ['reject', 'B-1', '--reason', 'wrong month', '--as', 'grace\r'],
      ['preview', 'B-1', '--as', 'ada\npreview'],
      ['cancel', '--batch', 'B-1', '--as', 'ops\u001b[2K'],
      ['console', 'login', 'ada\nx'],
    ]) {
      const refused = await runCli(args, { env });
      expect(refused.code, `${args[0]}: ${refused.stderr}`).toBe(64);
      expect(refused.stderr).toMatch(/a name cannot contain control characters \(U\+00(0A|0D|1B) at character \d+\)/);
    }
  });
});
