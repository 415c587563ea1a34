import { describe, expect, it } from 'vitest';
import type { LedgerRow } from '../../src/store/port.js';
import { reconcile } from '../../src/reports/reconciliation.js';
import { compareWithLedger, compareWithService } from '../../src/reports/reconciliation-checks.js';
import type { ServiceTransaction } from '../../src/api/answers.js';

const row = (over: Partial<LedgerRow>): LedgerRow => ({
  batch_id: 'B1', line: 2, external_id: 'X-1', transaction_id: 'tr_1', phase: 'funded', outcome: null, outcome_detail: null, errors: null, state: 'processing', state_reason: null, state_reason_code: null,
  input_amount: '1000', input_currency: 'USD', output_amount: '1000', output_currency: 'USD', refunded_amount: null,
  created_at: '2026-03-01T09:00:00.000Z', funded_at: '2026-03-01T09:00:01.000Z', paid_at: null, refunded_at: null, observed_at: null, recipient_name: null, settled_at: null, original_batch: null, original_line: null, ...over,
});
const day = { label: '2026-03-05', from: '2026-03-05T00:00:00.000Z', to: '2026-03-06T00:00:00.000Z' };

describe('reconcile (pure)', () => {
  it('lists a row funded days ago and not final as long in flight, counts it in flight, and moves no money for it today', () => {
    const rec = reconcile([row({})], day, { inFlightDays: 3 });
    expect(rec.movements).toEqual([]);
    expect(rec.input.get('USD')).toEqual({ debited: 0n, refunded: 0n, net: 0n, in_flight: 1000n });
    expect(rec.exceptions).toMatchObject([{ kind: 'long_in_flight', transaction_id: 'tr_1', reason: 'funded 2026-03-01T09:00:01.000Z, not final after 3 days' }]);
    expect(reconcile([row({})], day, { inFlightDays: 7 }).exceptions).toEqual([]);
  });

  it('takes a partial refund as the service states it, and the input amount when it states none', () => {
    const partial = row({ state: 'refunded', phase: 'final', refunded_at: '2026-03-05T10:00:00.000Z', refunded_amount: '400' });
    const whole = row({ line: 3, transaction_id: 'tr_2', state: 'refunded', phase: 'final', refunded_at: '2026-03-05T11:00:00.000Z' });
    expect(reconcile([partial, whole], day, { inFlightDays: 3 }).input.get('USD')).toEqual({ debited: 0n, refunded: 1400n, net: -1400n, in_flight: 0n });
  });

  it('checks against the service ledger whatever sign it writes debits with', () => {
    const paid = row({ state: 'paid', phase: 'final', paid_at: '2026-03-01T10:00:00.000Z' });
    expect(compareWithLedger([paid], [{ kind: 'debit', transaction_id: 'tr_1', currency: 'USD', amount: '-1000' }])).toEqual([]);
    expect(compareWithLedger([paid], [{ kind: 'debit', transaction_id: 'tr_1', currency: 'USD', amount: '1000' }])).toEqual([]);
    expect(compareWithLedger([paid], [
      { kind: 'debit', transaction_id: 'tr_1', currency: 'USD', amount: '-1000' },
      { kind: 'debit', transaction_id: 'tr_1', currency: 'USD', amount: '-1000' },
    ])).toMatchObject([{ check: 'ledger_debit', paybatch: '1000 USD', service: '2000 USD', explained: '' }]);
  });

  describe('a state that differs from the service\'s is explained only when the service\'s is newer, by the engine\'s one rule', () => {
    const NOW = Date.parse('2026-03-05T12:00:00.000Z');
    const tx = (over: Partial<ServiceTransaction>): ServiceTransaction => ({
      id: 'tr_1', external_id: 'X-1', state: 'paid', state_reason: null, state_reason_code: null, input_amount_in_cents: '1000', input_currency: 'USD',
      output_amount_in_cents: '1000', output_currency: 'USD', refunded_amount_in_cents: null, may_cancel: false, updated_at: null, raw: {}, ...over,
    });
    const explained = (r: LedgerRow, t: ServiceTransaction): string | undefined =>
      compareWithService([r], new Map([['tr_1', t]]), NOW).find((d) => d.check === 'state')?.explained;
    const stored = row({ observed_at: '2026-03-05T11:00:00.000Z' });

    it('a later updated_at: the service moved on after paybatch last heard', () => {
      expect(explained(stored, tx({ updated_at: '2026-03-05T11:30:00.000Z' }))).toMatch(/moved on after paybatch last heard/);
    });

    it('an updated_at beyond the clock skew allowed counts as undated: not newer than a dated observation', () => {
      expect(explained(stored, tx({ updated_at: '2026-03-06T12:00:00.000Z' }))).toBe('');
    });

    it('between undated observations the state\'s rank decides: a later state is newer, an earlier one is not', () => {
      expect(explained(row({}), tx({ state: 'paid' }))).toMatch(/moved on/);
      expect(explained(row({}), tx({ state: 'pending' }))).toBe('');
    });
  });
});
