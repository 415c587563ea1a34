/**
 * Builds, fast, the database `bench:console` measures: one settled batch of
 * `rows` rows received today, and its audit trail as the engine writes it
 * (each row's create requested, fund requested and state learned: three
 * entries a row, a valid hash chain made as the store makes it: src/audit/chain.ts
 * through the store's own statement and values). Direct
 * inserts in the store's schema, after the store made it (its migrations).
 */
import Database from 'better-sqlite3';
import { GENESIS } from '../src/audit/chain.js';
import type { NewAuditEntry } from '../src/audit/chain.js';
import { AUDIT_SQL, auditRow } from '../src/store/queries/audit.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';

export interface BuiltTrail {
  batch: string;
  rows: number;
  entries: number;
  head: { seq: number; hash: string };
}

const CHUNK = 20_000;

/** Every 500th row ends failed (a reason code to filter on), every 1,000th refunded; the rest paid. */
function stateOf(line: number): { state: string; code: string | null } {
  if (line % 1000 === 0) return { state: 'refunded', code: 'returned_by_bank' };
  if (line % 500 === 0) return { state: 'failed', code: 'invalid_account' };
  return { state: 'paid', code: null };
}

/** A trail appender over the bare table: the same chaining as the store's. */
export class TrailWriter {
  private last: string;
  private seq: number;
  private readonly insert: Database.Statement;

  constructor(private readonly db: Database.Database) {
    const head = db.prepare('SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1').get() as { seq: number; hash: string } | undefined;
    this.last = head?.hash ?? GENESIS;
    this.seq = head?.seq ?? 0;
    this.insert = db.prepare(AUDIT_SQL.append);
  }

  add(entry: NewAuditEntry): void {
    const { hash, values } = auditRow(this.last, entry);
    this.insert.run(...values);
    this.last = hash;
    this.seq += 1;
  }

  get head(): { seq: number; hash: string } {
    return { seq: this.seq, hash: this.last };
  }
}

function insertBatch(db: Database.Database, batch: string, rows: number, day: string): void {
  db.prepare(`INSERT INTO batches (id, file_name, sha256, size_bytes, status, policy, rows_total, rows_valid, received_at, settled_at, changes_by_answer, changes_by_polling)
    VALUES (?, 'payouts.csv', ?, ?, 'settled', 'send_valid', ?, ?, ?, ?, ?, ?)`)
    .run(batch, 'a'.repeat(64), rows * 250, rows, rows, `${day}T08:00:00.000Z`, `${day}T12:00:00.000Z`, rows * 2, rows);
}

/** Rows and their trail, chunk by chunk, each chunk one transaction. */
function insertRows(db: Database.Database, trail: TrailWriter, batch: string, rows: number, day: string): void {
  const insert = db.prepare(`INSERT INTO rows (batch_id, line, external_id, request, phase, transaction_id, state, state_reason, state_reason_code,
    input_amount, input_currency, output_amount, output_currency, created_at, funded_at, settled_at, observed_at, paid_at, refunded_at, refunded_amount, heard_at, recipient_name)
    VALUES (?, ?, ?, ?, 'final', ?, ?, ?, ?, ?, 'USD', ?, 'GBP', ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const chunk = db.transaction((from: number, to: number) => {
    for (let line = from; line < to; line += 1) {
      const external = `PAY-${String(line).padStart(8, '0')}`;
      const tx = `tx_${line.toString(16).padStart(12, '0')}`;
      const { state, code } = stateOf(line);
      const input = String(1_000 + (line % 90_000));
      const output = String(790 + (line % 70_000));
      const minute = String(Math.floor((line / rows) * 59)).padStart(2, '0');
      const at = `${day}T09:${minute}:00.000Z`;
      const request = JSON.stringify({ external_id: external, amount: output, currency: 'GBP', country: 'GBR', type: 'bank', account: '****1234' });
      insert.run(batch, line, external, request, tx, state, code ? 'the bank said so' : null, code, input, state === 'failed' ? null : output,
        at, at, at, at, state === 'paid' ? at : null, state === 'refunded' ? at : null, state === 'refunded' ? input : null, at, `Recipient ${line}`);
      trail.add({ at, actor: 'paybatch', action: 'create_requested', subject: `${batch} line ${line}`, details: { external_id: external, amount: output, currency: 'GBP' } });
      trail.add({ at, actor: 'paybatch', action: 'fund_requested', subject: `${batch} line ${line}`, details: { transaction_id: tx, amount: input, currency: 'USD' } });
      trail.add({ at, actor: 'paybatch', action: 'state_learned', subject: `${batch} line ${line}`, details: { transaction_id: tx, state, source: 'answer' } });
    }
  });
  for (let from = 2; from < rows + 2; from += CHUNK) chunk(from, Math.min(rows + 2, from + CHUNK));
}

/** Makes the schema through the store, then fills it. Lines are 2 to rows + 1, as in a file with a header. */
export async function buildConsoleDatabase(path: string, rows: number, day: string): Promise<BuiltTrail> {
  await SqliteStore.open(path).close();
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const batch = `B${day.replaceAll('-', '')}-bench001`;
  const trail = new TrailWriter(db);
  trail.add({ at: `${day}T08:00:00.000Z`, actor: 'inbox', action: 'intake_accepted', subject: 'payouts.csv', details: { batch, rows } });
  insertBatch(db, batch, rows, day);
  insertRows(db, trail, batch, rows, day);
  const entries = trail.head.seq;
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return { batch, rows, entries, head: trail.head };
}

/** Appends `count` more entries to the trail (what a day of work adds after a view). */
export function appendEntries(path: string, count: number, at: string): { seq: number; hash: string } {
  const db = new Database(path);
  const trail = new TrailWriter(db);
  db.transaction(() => {
    for (let i = 0; i < count; i += 1) trail.add({ at, actor: 'paybatch', action: 'configuration', subject: 'paybatch.config.json', details: { n: i } });
  })();
  db.close();
  return trail.head;
}
