/**
 * The reconciliation's ledger check compares amounts in one currency: a row
 * funded 1000.00 EUR against a ledger debit of 1000.00 USD is a difference,
 * never "0 differences" (found by an attack: sizes were once compared alone).
 */
import { describe, expect, it } from 'vitest';
import { compareWithLedger } from '../../src/reports/reconciliation-checks.js';
import type { LedgerRow } from '../../src/store/port.js';
import { verdictOf } from '../../src/reports/reconciliation-verdict.js';

describe('the ledger check compares currencies too', () => {
  it('a debit in another currency than the row was funded in is a difference', () => {
    const row = {
      batch_id: 'B1', line: 2, external_id: 'INV-1', transaction_id: 'tx-1', phase: 'final', state: 'paid',
      input_amount: '100000', input_currency: 'EUR', funded_at: '2026-11-27T10:00:00.000Z', refunded_at: null, refunded_amount: null,
    } as unknown as LedgerRow;
    const differences = compareWithLedger([row], [{ kind: 'debit', transaction_id: 'tx-1', currency: 'USD', amount: '-100000' }]);
    const verdict = verdictOf(['service_states', 'service_ledger', 'held_answers', 'corrections_paid_once'].map((check) => ({ check: check as never, ran: true, detail: '' })), differences.length, differences.length);
    expect(verdict.words).not.toBe('0 differences');
    expect(differences).toHaveLength(1);
    expect(differences[0]).toMatchObject({ check: 'ledger_debit', paybatch: '100000 EUR', service: '0 EUR; debit 100000 USD' });
  });
});
