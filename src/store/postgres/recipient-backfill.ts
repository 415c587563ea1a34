/** PostgreSQL's run of the recipient backfill (queries/recipient-backfill.ts): at open, one statement a page. */
import * as q from '../queries/recipient-backfill.js';
import type { PgConnection } from './client.js';

/**
 * Fills the recipient accounts of rows stored before they were kept; once per database. Workers opening at once may
 * both run it: neither overwrites an entry. Returns the rows given one here.
 */
export async function backfillRecipientsPg(c: PgConnection, now: () => Date = () => new Date()): Promise<number> {
  if (await c.first(q.BACKFILL_DONE, [q.BACKFILL_NAME]) !== undefined) return 0;
  let after: [string, number] = ['', 0];
  let filled = 0;
  for (;;) {
    const page = await c.all<q.StoredRequest>(q.PAGE_WITHOUT_ENTRY, after);
    if (page.length === 0) break;
    const { params, count } = q.entriesOfPage(page);
    if (count > 0) {
      const [byLine, byPayment] = q.insertEntriesStatements(count);
      filled += await c.tx(async (tx) => {
        const changes = await tx.run(byLine, params);
        await tx.run(byPayment, params);
        return changes;
      });
    }
    after = q.pageEnd(page);
  }
  await c.run(q.MARK_DONE, [q.BACKFILL_NAME, now().toISOString()]);
  return filled;
}

/** Fills recipient_payments from the entries by line kept before it, once per database, in one statement. Workers opening at once may both run it. */
export async function backfillPaymentsPg(c: PgConnection, now: () => Date = () => new Date()): Promise<number> {
  if (await c.first(q.BACKFILL_DONE, [q.PAYMENTS_BACKFILL_NAME]) !== undefined) return 0;
  const filled = await c.run(q.FILL_PAYMENTS);
  await c.run(q.MARK_DONE, [q.PAYMENTS_BACKFILL_NAME, now().toISOString()]);
  return filled;
}
