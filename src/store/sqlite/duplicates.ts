/**
 * SQLite's own part of the possible-duplicate queries: the writes of several
 * statements, run synchronously inside c.atomic, with the statements written
 * once in queries/duplicates.ts.
 */
import type { NewAuditEntry } from '../../audit/chain.js';
import type { Allowance, RecipientEntry } from '../port.js';
import type { Finding } from '../queries/duplicates.js';
import * as q from '../queries/duplicates.js';
import type { SqliteConnection } from './connection.js';
import { chunkStarts, sortedEntries } from './payments-in-order.js';

/** Call inside a transaction. */
export function recordRecipientsSqlite(c: SqliteConnection, batchId: string, entries: readonly RecipientEntry[]): void {
  const full = c.sql(q.recordRecipientsStatement(q.RECIPIENTS_PER_STATEMENT));
  const one = c.sql(q.recordRecipientsStatement(1));
  let at = 0;
  for (; at + q.RECIPIENTS_PER_STATEMENT <= entries.length; at += q.RECIPIENTS_PER_STATEMENT) {
    full.run(...q.recipientParams(batchId, entries.slice(at, at + q.RECIPIENTS_PER_STATEMENT)));
  }
  // The rest one by one: one compiled statement, not one for each size of a last chunk.
  for (; at < entries.length; at++) one.run(...q.recipientParams(batchId, entries.slice(at, at + 1)));
}

/**
 * A batch's entries by payment (DuplicateStore.indexRecipients), in that order (payments-in-order.ts), the event
 * loop let run between chunks.
 */
export async function indexRecipientsSqlite(c: SqliteConnection, batchId: string): Promise<void> {
  const sorted = sortedEntries(c.db, batchId);
  try {
    for (const after of chunkStarts(sorted.count)) {
      sorted.writeChunk(after);
      // Answers, webhooks and the engine's commits (and another intake's screen) go on between chunks.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  } finally {
    sorted.drop();
  }
}

/** Call inside a transaction: the findings kept, and each `hold` row still ready moved to duplicate_hold. */
export function recordPossibleDuplicatesSqlite(c: SqliteConnection, found: readonly Finding[]): void {
  // One finding to a statement: in process, a statement costs no round trip, and two compiled statements serve all.
  for (const write of q.findingWrites(found, 1)) c.sql(write.sql).run(...write.params);
}

/** Call inside a transaction; `audit` appends to the trail in it. */
export function allowDuplicateSqlite(c: SqliteConnection, batchId: string, line: number, allowance: Allowance, audit: (entry: NewAuditEntry) => void): boolean {
  if (c.sql(q.RELEASE_HELD).run(batchId, line).changes === 0) return false;
  const found = c.sql(q.RECORD_ALLOWANCE).get(...q.allowanceParams(batchId, line, allowance)) as Parameters<typeof q.allowanceEntry>[3];
  audit(q.allowanceEntry(batchId, line, allowance, found));
  return true;
}
