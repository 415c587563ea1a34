import { describe, expect, it } from 'vitest';
import type { Collected } from '../../chaos/invariants.js';
import { checkInvariants } from '../../chaos/invariants.js';

const clean = (): Collected => ({
  rowsIn: 3,
  rowsInResults: 3,
  serviceExternalIds: ['A', 'B'],
  ledger: [
    { kind: 'debit', transaction_id: 'tr_a', currency: 'USD', amount: '-100' },
    { kind: 'debit', transaction_id: 'tr_b', currency: 'USD', amount: '-50' },
    { kind: 'credit', transaction_id: 'tr_b', currency: 'USD', amount: '50' },
  ],
  balancesBefore: { USD: '1000' },
  balancesAfter: { USD: '900' },
  rows: [
    { batch_id: 'B', line: 2, external_id: 'A', transaction_id: 'tr_a', phase: 'final', state: 'paid', reads: 2, created_at: '2026-01-01T00:00:00.000Z' },
    { batch_id: 'B', line: 3, external_id: 'B', transaction_id: 'tr_b', phase: 'final', state: 'refunded', reads: 3, created_at: '2026-01-01T00:00:00.000Z' },
    { batch_id: 'B', line: 4, external_id: 'C', transaction_id: null, phase: 'invalid', state: null, reads: 0, created_at: null },
  ],
  differences: 0,
  unexplainedDifferences: 0,
  seconds: 1,
  polling: { first_window_ms: 60_000, first_window_reads: 12, later_interval_ms: 10_000 },
  endedAt: Date.parse('2026-01-01T00:01:00.000Z'),
});

const failing = (c: Collected): string[] => checkInvariants(c, 1).filter((check) => !check.ok).map((check) => check.name);

describe('the chaos run\'s invariants', () => {
  it('all hold for a clean run', () => {
    expect(failing(clean())).toEqual([]);
  });

  it('each fails when what it guards is broken', () => {
    expect(failing({ ...clean(), rowsInResults: 2 })).toEqual(['rows in = rows in results']);
    expect(failing({ ...clean(), serviceExternalIds: ['A', 'A', 'B'] })).toEqual(['transactions per external_id']);
    const twice = clean();
    twice.ledger.push({ kind: 'debit', transaction_id: 'tr_a', currency: 'USD', amount: '-100' });
    expect(failing(twice)).toEqual(['fundings per transaction (sandbox ledger)', 'balance USD: before - debits + refunds = after']);
    expect(failing({ ...clean(), balancesAfter: { USD: '899' } })).toEqual(['balance USD: before - debits + refunds = after']);
    const open = clean();
    open.rows[0] = { ...open.rows[0] as (typeof open.rows)[number], phase: 'creating', state: null };
    expect(failing(open)).toEqual(['every row final or in an attention state']);
    expect(failing({ ...clean(), differences: 2, unexplainedDifferences: 1 })).toEqual(['reconciliation report']);
    const greedy = clean();
    greedy.rows[0] = { ...greedy.rows[0] as (typeof greedy.rows)[number], reads: 40 };
    expect(failing(greedy)).toEqual(['reads per transaction within the polling budget']);
  });

  it('counts as transactions only rows that have one: a claimed row has a created_at before (or without) its transaction', () => {
    const c = clean();
    c.rows.push({ batch_id: 'B', line: 5, external_id: 'D', transaction_id: null, phase: 'final', state: null, reads: 0, created_at: '2026-01-01T00:00:00.000Z' });
    const reads = checkInvariants(c, 1).find((check) => check.name === 'reads per transaction within the polling budget');
    expect(reads?.figure).toMatch(/^2 transactions, 2\.50 reads each/);
  });

  it('counts a row waiting in an attention state as done, but not one still being funded', () => {
    const c = clean();
    c.rows.push({ batch_id: 'B', line: 5, external_id: 'D', transaction_id: 'tr_d', phase: 'funded', state: 'stuck', reads: 1, created_at: '2026-01-01T00:00:00.000Z' });
    expect(failing(c)).toEqual([]);
    c.rows.push({ batch_id: 'B', line: 6, external_id: 'E', transaction_id: 'tr_e', phase: 'funding', state: 'approved', reads: 1, created_at: '2026-01-01T00:00:00.000Z' });
    expect(failing(c)).toEqual(['every row final or in an attention state']);
  });
});
