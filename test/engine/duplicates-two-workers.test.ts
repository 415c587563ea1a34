/**
 * Two PostgreSQL workers (two stores on one database) each taking in a file paying the same account the same amount,
 * at the same moment: each screened before the other is accepted. On PostgreSQL a batch's rows wait in 'checking'
 * until it is accepted, a phase never sent; counted as nobody's twin, neither screen found the other and both rows
 * were sent. A row of a batch still being taken in may be sent in a moment: it is a twin, and the row found with it
 * is held (docs/operations.md, Possible duplicate payments).
 */
import { describe, expect, it } from 'vitest';
import type { PayoutRequest } from '../../src/api/payout-request.js';
import { screenDuplicates } from '../../src/engine/duplicate-screen.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { freshDatabase, postgresAvailable } from '../helpers/postgres.js';

const available = await postgresAvailable('two PostgreSQL workers screening files paying the same');
const AT = '2026-03-02T09:00:00.000Z';
const request = (id: string): PayoutRequest => ({
  external_id: id, type: 'bank', input_currency_code: 'EUR', output_currency_code: 'EUR', output_amount_in_cents: '10000',
  sender: { external_id: 'S-1' }, recipient: { country_code: 'DEU', iban: 'DE89370400440532013000' },
});
const policy = { duplicate_window: '30d', on_duplicate: 'hold' as const };

describe.skipIf(!available)('two PostgreSQL workers taking in files paying the same at once', () => {
  it('stored by both, screened by both before either is accepted: the second screened is held', async () => {
    const database = await freshDatabase();
    const one = await PostgresStore.open(database.url);
    const two = await PostgresStore.open(database.url);
    try {
      const begin = (store: PostgresStore, sha: string): Promise<string> =>
        store.beginBatch({ file_name: `${sha}.csv`, sha256: sha.repeat(64), size_bytes: 1, policy: 'reject_file', received_at: AT, file_mtime_ms: 1, send_after: 0 });
      const a = await begin(one, 'a');
      const b = await begin(two, 'b');
      await one.addRows(a, [{ line: 2, external_id: 'A-1', request: request('A-1'), errors: [] }]);
      await two.addRows(b, [{ line: 2, external_id: 'B-1', request: request('B-1'), errors: [] }]);
      // Worker one screens A (B's accounts not written yet: nothing found), then worker two screens B: it finds A's row.
      expect(await screenDuplicates(a, Date.parse(AT), { store: one, batch: policy })).toEqual({ held: 0, warned: 0 });
      expect(await screenDuplicates(b, Date.parse(AT), { store: two, batch: policy })).toEqual({ held: 1, warned: 0 });
      await one.acceptBatch(a);
      await two.acceptBatch(b);
      expect([(await one.row(a, 2))?.phase, (await two.row(b, 2))?.phase]).toEqual(['ready', 'duplicate_hold']);
      expect((await two.possibleDuplicates(b))[0]?.detail).toMatch(/possible duplicate of batch .* line 2 \(external_id A-1, checking, 2026-03-02\), which may still pay: held/);
    } finally {
      await one.close();
      await two.close();
      await database.drop();
    }
  });
});
