/**
 * PostgreSQL's own part of the possible-duplicate queries: the writes of
 * several statements, run in a transaction (the client of c.tx), with the
 * statements written once in queries/duplicates.ts.
 */
import type { NewAuditEntry } from '../../audit/chain.js';
import type { Allowance } from '../port.js';
import type { Finding } from '../queries/duplicates.js';
import * as q from '../queries/duplicates.js';
import type { PgConnection } from './client.js';

/** Entries written by one indexing from which the planner's figures are taken again (as intake's ANALYZE_FROM_ROWS). */
const ANALYZE_FROM_ENTRIES = 10_000;

/**
 * A batch's entries by payment (DuplicateStore.indexRecipients), in that order, in one statement: a transaction of
 * its own, committed before the batch is screened. (Its rows are nobody's twin before its acceptance all the same:
 * they wait in 'checking', a phase never sent; docs/operations.md, Possible duplicate payments.) Fresh statistics
 * after a large batch, as after its rows.
 */
export async function indexRecipientsPg(c: PgConnection, batchId: string): Promise<void> {
  if ((await c.run(q.INDEX_PAYMENTS, [batchId])) >= ANALYZE_FROM_ENTRIES) await c.run('ANALYZE recipient_payments');
}

/**
 * Call inside a transaction: the findings kept, and each `hold` row still ready moved to duplicate_hold, a hundred
 * to a statement (a round trip each: one per finding was most of a million-row intake's time, docs/performance.md).
 */
export async function recordPossibleDuplicatesPg(tx: PgConnection, found: readonly Finding[]): Promise<void> {
  for (const write of q.findingWrites(found, q.FINDINGS_PER_STATEMENT)) await tx.run(write.sql, write.params);
}

/** Call inside a transaction; `audit` appends to the trail in it. */
export async function allowDuplicatePg(tx: PgConnection, batchId: string, line: number, allowance: Allowance, audit: (entry: NewAuditEntry) => Promise<void>): Promise<boolean> {
  if ((await tx.run(q.RELEASE_HELD, [batchId, line])) === 0) return false;
  const found = await tx.first<Parameters<typeof q.allowanceEntry>[3]>(q.RECORD_ALLOWANCE, q.allowanceParams(batchId, line, allowance));
  await audit(q.allowanceEntry(batchId, line, allowance, found));
  return true;
}
