/**
 * The per-row check behind an approval, and the seal of a release: pure. A row
 * is covered only with its line and every field of its request as signed; a
 * release seal holds only for the key, the batch, what was approved and the
 * time it was made over.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { PayoutRequest } from '../../src/api/payout-request.js';
import { approvalFacts } from '../../src/approvals/facts.js';
import { sealedReleaseTime, sealRelease } from '../../src/approvals/release-seal.js';
import { rowBytes } from '../../src/approvals/signed-rows.js';

const request = (id: string, amount = '10000'): PayoutRequest => ({
  external_id: id, type: 'bank', input_currency_code: 'GBP', output_currency_code: 'GBP', output_amount_in_cents: amount,
  sender: { external_id: 'S-1' }, recipient: { country_code: 'GBR', name: 'Ada' },
});

async function* rows(list: { line: number; request: PayoutRequest }[]): AsyncIterable<{ line: number; request: PayoutRequest }> {
  yield* list;
}

describe('the rows an approval covers', () => {
  const signed = [2, 3, 5].map((line) => ({ line, request: request(`T-${line}`) }));

  it('covers each row as signed, in the same bytes as rows_sha256, and nothing else', async () => {
    const facts = await approvalFacts({ id: 'B1', sha256: 'a'.repeat(64) }, rows(signed), {}, 'd'.repeat(32));
    const whole = createHash('sha256').update(signed.map((r) => rowBytes(r.line, r.request)).join('')).digest('hex');
    expect(facts.expected).toMatchObject({ deployment: 'd'.repeat(32), rows: 3, rows_sha256: whole });
    expect(facts.rows.size).toBe(3);
    for (const row of signed) expect(facts.rows.covers(row.line, row.request)).toBe(true);
    // Keys in another order are the same request.
    const { recipient, ...rest } = request('T-3');
    expect(facts.rows.covers(3, { recipient: { name: 'Ada', country_code: 'GBR' }, ...rest })).toBe(true);
    // Edited: the amount, the recipient, the external id; moved to another line; inserted at a new line.
    expect(facts.rows.covers(3, request('T-3', '55000'))).toBe(false);
    expect(facts.rows.covers(3, { ...request('T-3'), recipient: { ...recipient, name: 'Mallory' } })).toBe(false);
    expect(facts.rows.covers(3, request('T-EVIL'))).toBe(false);
    expect(facts.rows.covers(5, request('T-3'))).toBe(false);
    expect(facts.rows.covers(4, request('T-4'))).toBe(false);
    expect(facts.rows.covers(6, request('T-5'))).toBe(false);
  });

  it('a release seal holds for its key, batch, approval and time only', () => {
    const key = Buffer.alloc(32, 1);
    const what = { deployment: 'd'.repeat(32), batch: 'B1', rows_sha256: 'r'.repeat(64), expires_at: '2026-11-27T15:00:00.000Z' };
    const at = Date.parse('2026-11-27T14:00:00.000Z');
    const { at: releasedAt, seal } = sealRelease(key, what, at);
    expect(sealedReleaseTime(key, what, { released_at: releasedAt, release_seal: seal })).toBe(at);
    expect(sealedReleaseTime(Buffer.alloc(32, 2), what, { released_at: releasedAt, release_seal: seal })).toBeNull();
    expect(sealedReleaseTime(undefined, what, { released_at: releasedAt, release_seal: seal })).toBeNull();
    expect(sealedReleaseTime(key, { ...what, batch: 'B2' }, { released_at: releasedAt, release_seal: seal })).toBeNull();
    expect(sealedReleaseTime(key, { ...what, expires_at: '2026-11-28T15:00:00.000Z' }, { released_at: releasedAt, release_seal: seal })).toBeNull();
    expect(sealedReleaseTime(key, what, { released_at: '2026-11-27T13:00:00.000Z', release_seal: seal })).toBeNull();
    expect(sealedReleaseTime(key, what, { released_at: releasedAt, release_seal: null })).toBeNull();
  });
});
