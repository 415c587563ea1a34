/**
 * `paybatch audit verify` checks the trail in ranges on two threads, with
 * the body of each hash's encoding built by SQLite: that body is byte for
 * byte what audit/chain.ts hashes (on random entries: every ASCII character,
 * quotes, backslashes, newlines, non-ASCII), an entry SQLite would write
 * differently is hashed by chain.ts itself, and a trail tampered with across
 * ranges and threads is named at the same entry, with the same message, as a
 * walk from the start names it.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { hash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry, NewAuditEntry } from '../../src/audit/chain.js';
import { ChainWalker, GENESIS, bodyHash, entryHash } from '../../src/audit/chain.js';
import { firstFault } from '../../src/audit/chain-range.js';
import { AUDIT_SQL, auditRow } from '../../src/store/queries/audit.js';
import { AUDIT_RANGE_SQL } from '../../src/store/sqlite/audit-range-read.js';
import { checkAuditRanges, cutRanges } from '../../src/store/sqlite/audit-ranges.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'paybatch-audit-ranges-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A workspace's database made by the store, its trail appended as the store appends it. */
async function trailOf(file: string, entries: NewAuditEntry[]): Promise<void> {
  await SqliteStore.open(file).close();
  const db = new Database(file);
  let last = GENESIS;
  const insert = db.prepare(AUDIT_SQL.append);
  db.transaction(() => {
    for (const entry of entries) {
      const { hash: next, values } = auditRow(last, entry);
      insert.run(...values);
      last = next;
    }
  })();
  db.close();
}

/** What the old `audit verify` said: the trail walked from its start, each entry with a look at the one after it. */
function walkedFromStart(file: string): { broken: string | null; entries: number } {
  const db = new Database(file, { readonly: true });
  const all = db.prepare('SELECT seq, version, at, actor, action, subject, details, prev_hash, hash FROM audit_log WHERE seq > 0 ORDER BY seq').all() as AuditEntry[];
  db.close();
  const walker = new ChainWalker();
  for (let i = 0; i < all.length; i += 1) {
    const found = walker.next(all[i] as AuditEntry, all[i + 1]);
    if (found) return { broken: `audit trail BROKEN at entry ${found.seq}: ${found.message}\n`, entries: walker.count };
  }
  return { broken: null, entries: walker.count };
}

const seeded = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};

/** A random string: printable ASCII mostly, and now and then a control character, a quote, a backslash, DEL or beyond ASCII. */
function randomText(random: () => number, length: number): string {
  const rare = ['"', '\\', '\n', '\t', '\u0000', '\u0001', '\u001f', '\u007f', 'é', '€', '😀', '\u2028', '/', "'"];
  let text = '';
  for (let i = 0; i < length; i += 1) text += random() < 0.004 ? rare[Math.floor(random() * rare.length)] : String.fromCharCode(32 + Math.floor(random() * 95));
  return text;
}

describe('the body SQLite builds for the hash', () => {
  it('is, on random entries, byte for byte the one chain.ts encodes; entries whose body is not plain ASCII are hashed by chain.ts, and all verify', async () => {
    const file = join(dir, 'random.db');
    const random = seeded(42);
    const entries: NewAuditEntry[] = Array.from({ length: 3_000 }, (_, i) => ({
      at: randomText(random, 24), actor: randomText(random, 8), action: randomText(random, 12), subject: random() < 0.3 ? `B${i} line ${i}` : randomText(random, 20),
      details: { note: randomText(random, 40), every: String.fromCharCode(i % 128), n: i },
    }));
    // Every ASCII character alone, in each field.
    for (let c = 0; c < 128; c += 1) entries.push({ at: String.fromCharCode(c), actor: `a${String.fromCharCode(c)}`, action: String.fromCharCode(c), subject: String.fromCharCode(c), details: { c: String.fromCharCode(c) } });
    await trailOf(file, entries);
    const db = new Database(file, { readonly: true });
    const rows = db.prepare(AUDIT_RANGE_SQL.page).raw().all(0, 1e9) as [number, number, string, string, string | null][];
    const whole = db.prepare(AUDIT_RANGE_SQL.whole);
    let plain = 0;
    for (const [seq, version, , stored, body] of rows) {
      const entry = whole.get(seq) as AuditEntry;
      const encoded = JSON.stringify([entry.prev_hash, entry.at, entry.actor, entry.action, entry.subject, entry.details]);
      if (body !== null && !/[^\x20-\x7e]/.test(body)) {
        plain += 1;
        expect(body).toBe(encoded);
        expect(bodyHash(body, version)).toBe(stored);
      }
      expect(entryHash(entry.prev_hash, entry, version)).toBe(stored);
    }
    db.close();
    expect(plain).toBeGreaterThan(100);
    expect(plain).toBeLessThan(rows.length);
    const ranges = await checkAuditRanges(file, rows.length, { minRange: 100 });
    expect(ranges.length).toBeGreaterThan(4);
    expect(firstFault(ranges)).toBeNull();
    expect(ranges.reduce((n, r) => n + r.entries, 0)).toBe(rows.length);
  });

  it('an entry hashed over what SQLite would write, but not chain.ts (a blob where text is), is at fault', async () => {
    const file = join(dir, 'forged.db');
    await trailOf(file, Array.from({ length: 10 }, (_, i) => ({ at: '2026-03-01T09:00:00.000Z', actor: 'paybatch', action: 'configuration', subject: 'paybatch.config.json', details: { i } })));
    const db = new Database(file);
    // A blob SQLite takes for JSONB (the text "ab"): json_array() writes it as the string "ab", JavaScript reads it as bytes.
    const body = db.prepare("SELECT json_array(prev_hash, at, actor, action, subject, X'276162') FROM audit_log WHERE seq = 5").pluck().get() as string;
    expect(body).toMatch(/,"ab"\]$/);
    db.prepare("UPDATE audit_log SET details = X'276162', hash = ? WHERE seq = 5").run(hash('sha256', `paybatch audit v2\n${body}`, 'hex'));
    db.close();
    expect(firstFault(await checkAuditRanges(file, 10))).toEqual({ seq: 5, index: 4 });
    expect(walkedFromStart(file).broken).toMatch(/^audit trail BROKEN at entry 5: entry 5 \(configuration paybatch.config.json\) was edited/);
  });
});

describe('a trail tampered with across ranges and threads', () => {
  const home = join(dir, 'ws');
  const pristine = join(dir, 'pristine.db');
  const ENTRIES = 3_001;
  beforeAll(async () => {
    await runCli(['audit', 'verify', '--home', home]);
    const entries: NewAuditEntry[] = [{ at: '2026-03-01T08:00:00.000Z', actor: 'inbox', action: 'intake_accepted', subject: 'payouts.csv', details: { batch: 'B1', rows: 1000 } }];
    for (let line = 2; line < 1_002; line += 1) {
      for (const action of ['create_requested', 'fund_requested', 'state_learned']) entries.push({ at: '2026-03-01T09:00:00.000Z', actor: 'paybatch', action, subject: `B1 line ${line}`, details: { amount: String(line) } });
    }
    await trailOf(pristine, entries);
  }, 30_000);

  /** A copy of the trail, changed by `tamper`, verified by the CLI; and what a walk from the start says of it. */
  async function verifyAfter(tamper: (db: Database.Database) => void, extra: string[] = []) {
    const file = join(home, 'paybatch.db');
    copyFileSync(pristine, file);
    const db = new Database(file);
    tamper(db);
    db.close();
    return { ...(await runCli(['audit', 'verify', '--home', home, ...extra])), walked: walkedFromStart(file) };
  }

  it('spans several ranges (so several threads and seams)', () => {
    expect(cutRanges(ENTRIES, 8, 256).length).toBe(8);
  });

  it('intact: every entry counted, the head printed', async () => {
    const result = await verifyAfter(() => {});
    expect(result.stdout).toMatch(new RegExp(`^audit trail intact: ${ENTRIES} entries, head ${ENTRIES}:[0-9a-f]{64}\\n$`));
    // Checked on threads: nothing fell back to a walk on one.
    expect(result.stderr).toBe('');
  });

  it('one field of one entry in the middle altered: that entry', async () => {
    const result = await verifyAfter((db) => db.prepare("UPDATE audit_log SET details = '{\"amount\":\"1\"}' WHERE seq = 1500").run());
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('audit trail BROKEN at entry 1500: entry 1500 (fund_requested B1 line 501) was edited: its content no longer matches its hash\n');
    expect(result.stdout).toBe(result.walked.broken);
  });

  it('a link broken at a seam between ranges, and only there (the trail rehashed from it on): that entry', async () => {
    const seam = (cutRanges(ENTRIES, 8, 256)[3] as { after: number }).after + 1;
    const result = await verifyAfter((db) => {
      let prev = 'f'.repeat(64);
      for (const entry of db.prepare('SELECT * FROM audit_log WHERE seq >= ? ORDER BY seq').all(seam) as AuditEntry[]) {
        const again = entryHash(prev, entry, 2);
        db.prepare('UPDATE audit_log SET prev_hash = ?, hash = ? WHERE seq = ?').run(prev, again, entry.seq);
        prev = again;
      }
    });
    expect(result.stdout).toMatch(new RegExp(`^audit trail BROKEN at entry ${seam}: entry ${seam} \\(.+\\) was inserted: it chains from no entry of the trail\\n$`));
    expect(result.stdout).toBe(result.walked.broken);
  });

  it('an entry deleted, in the middle and the first of a range: the entry deleted', async () => {
    const deleted = await verifyAfter((db) => db.prepare('DELETE FROM audit_log WHERE seq = 2000').run());
    expect(deleted.stdout).toBe('audit trail BROKEN at entry 2000: entry 2000 was deleted: entry 2001 chains from an entry no longer there\n');
    const seam = (cutRanges(ENTRIES, 8, 256)[5] as { after: number }).after + 1;
    const atSeam = await verifyAfter((db) => db.prepare('DELETE FROM audit_log WHERE seq = ?').run(seam));
    expect(atSeam.stdout).toBe(`audit trail BROKEN at entry ${seam}: entry ${seam} was deleted: entry ${seam + 1} chains from an entry no longer there\n`);
    expect(atSeam.stdout).toBe(atSeam.walked.broken);
  });

  it('two entries swapped across a seam, and --json: named as a walk names them, with the entries looked at', async () => {
    const seam = (cutRanges(ENTRIES, 8, 256)[2] as { after: number }).after;
    const result = await verifyAfter((db) => {
      db.prepare('UPDATE audit_log SET seq = -1 WHERE seq = ?').run(seam);
      db.prepare('UPDATE audit_log SET seq = ? WHERE seq = ?').run(seam, seam + 1);
      db.prepare('UPDATE audit_log SET seq = ? WHERE seq = -1').run(seam + 1);
    }, ['--json']);
    const json = JSON.parse(result.stdout) as { intact: boolean; entries: number; broken: { seq: number; message: string } };
    expect(json.intact).toBe(false);
    expect(`audit trail BROKEN at entry ${json.broken.seq}: ${json.broken.message}\n`).toBe(result.walked.broken);
    expect(json.broken.message).toMatch(/out of order/);
    expect(json.entries).toBe(result.walked.entries);
  });
});
