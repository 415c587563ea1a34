/** The SQLite implementation of the store: better-sqlite3, synchronous, so each method is atomic. */
import type { PayoutRequest } from '../batch/payout-request.js';
import type { Issue } from '../validate/issue.js';
import type { SqliteDatabase } from './database.js';
import { migrate, openDatabase } from './database.js';
import { MIGRATIONS } from './migrations.js';
import type { BatchRecord, IntakeStore, NewRow, RowRecord } from './store.js';

interface RowColumns {
  batch_id: string;
  line: number;
  external_id: string | null;
  phase: string;
  outcome: string | null;
  errors: string | null;
  request: string | null;
}

export class SqliteStore implements IntakeStore {
  private constructor(private readonly db: SqliteDatabase) {}

  static open(file: string): SqliteStore {
    const db = openDatabase(file);
    migrate(db, MIGRATIONS);
    return new SqliteStore(db);
  }

  async acceptedBatchWithContent(sha256: string): Promise<BatchRecord | undefined> {
    return this.db.prepare("SELECT * FROM batches WHERE sha256 = ? AND status IN ('accepted', 'settled') ORDER BY received_at LIMIT 1").get(sha256) as BatchRecord | undefined;
  }

  async beginBatch(batch: Pick<BatchRecord, 'file_name' | 'sha256' | 'size_bytes' | 'policy' | 'received_at'>): Promise<string> {
    return this.db.transaction(() => {
      const stem = `B${batch.received_at.slice(0, 10).replace(/-/g, '')}-${batch.sha256.slice(0, 8)}`;
      let id = stem;
      for (let n = 2; this.db.prepare('SELECT 1 FROM batches WHERE id = ?').get(id); n++) id = `${stem}-${n}`;
      this.db.prepare(`INSERT INTO batches (id, file_name, sha256, size_bytes, status, policy, received_at)
        VALUES (@id, @file_name, @sha256, @size_bytes, 'intake', @policy, @received_at)`).run({ id, ...batch });
      return id;
    })();
  }

  async addRows(batchId: string, rows: readonly NewRow[]): Promise<void> {
    const insert = this.db.prepare(`INSERT INTO rows (batch_id, line, external_id, request, phase, errors, output_amount, output_currency)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
    this.db.transaction(() => {
      for (const row of rows) {
        insert.run(
          batchId,
          row.line,
          row.external_id,
          row.request ? JSON.stringify(row.request) : null,
          row.request ? 'checking' : 'invalid',
          row.errors.length > 0 ? JSON.stringify(row.errors) : null,
          row.request?.output_amount_in_cents ?? null,
          row.request?.output_currency_code ?? null,
        );
      }
      this.db.prepare('UPDATE batches SET rows_total = rows_total + ? WHERE id = ?').run(rows.length, batchId);
    })();
  }

  async invalidateRow(batchId: string, line: number, error: Issue): Promise<void> {
    this.db.transaction(() => {
      const row = this.db.prepare('SELECT errors FROM rows WHERE batch_id = ? AND line = ?').get(batchId, line) as { errors: string | null } | undefined;
      if (!row) return;
      const errors = [...(row.errors ? (JSON.parse(row.errors) as Issue[]) : []), error];
      this.db.prepare("UPDATE rows SET phase = 'invalid', errors = ? WHERE batch_id = ? AND line = ?").run(JSON.stringify(errors), batchId, line);
    })();
  }

  async rejectBatch(batchId: string, reason: string): Promise<void> {
    this.db.transaction(() => {
      this.db.prepare("UPDATE rows SET phase = 'not_sent' WHERE batch_id = ? AND phase = 'checking'").run(batchId);
      this.db.prepare("UPDATE batches SET status = 'rejected', reason = ? WHERE id = ?").run(reason, batchId);
    })();
  }

  async acceptBatch(batchId: string): Promise<{ ready: number; refused: number; invalid: number }> {
    return this.db.transaction(() => {
      const refused = this.db.prepare(`UPDATE rows SET phase = 'refused', outcome = 'external_id_already_used'
        WHERE batch_id = ? AND phase = 'checking' AND external_id IN (
          SELECT external_id FROM rows WHERE batch_id <> ? AND phase NOT IN ('checking', 'invalid', 'refused', 'not_sent'))`).run(batchId, batchId).changes;
      const ready = this.db.prepare("UPDATE rows SET phase = 'ready' WHERE batch_id = ? AND phase = 'checking'").run(batchId).changes;
      const invalid = (this.db.prepare("SELECT COUNT(*) FROM rows WHERE batch_id = ? AND phase = 'invalid'").pluck().get(batchId)) as number;
      this.db.prepare("UPDATE batches SET status = 'accepted', rows_valid = ? WHERE id = ?").run(ready, batchId);
      return { ready, refused, invalid };
    })();
  }

  async batch(id: string): Promise<BatchRecord | undefined> {
    return this.db.prepare('SELECT * FROM batches WHERE id = ?').get(id) as BatchRecord | undefined;
  }

  async *rows(batchId: string): AsyncIterable<RowRecord> {
    // Pages of rows, not one long-lived cursor: other operations may write in between.
    const page = this.db.prepare('SELECT batch_id, line, external_id, phase, outcome, errors, request FROM rows WHERE batch_id = ? AND line > ? ORDER BY line LIMIT 1000');
    for (let after = 0; ; ) {
      const rows = page.all(batchId, after) as RowColumns[];
      if (rows.length === 0) return;
      for (const row of rows) {
        yield {
          ...row,
          errors: row.errors ? (JSON.parse(row.errors) as Issue[]) : [],
          request: row.request ? (JSON.parse(row.request) as PayoutRequest) : null,
        };
      }
      after = (rows[rows.length - 1] as RowColumns).line;
    }
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
