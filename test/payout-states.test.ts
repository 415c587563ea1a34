import { describe, expect, it } from 'vitest';
import {
  FINAL_STATES, NEVER_SENT_PHASES, PHASES, SENDABLE_PHASES, TX_STATES, UNPAID_FINAL_STATES, UNSENDABLE_PHASES, committedToBudget, isFinal, isNewer,
  isTxState, isUnpaidFinalState, trustedUpdatedAt, MAX_CLOCK_SKEW_MS, REASONS, phaseOf, reasonCodeOf,
} from '../src/payout-states.js';

describe('the vocabulary (payout-states.ts)', () => {
  it('names exactly the service\'s states [3.1]: a state it never has is not one', () => {
    expect(TX_STATES).toHaveLength(14);
    for (const made of ['rejected', 'declined', 'expired', 'funded']) expect(isTxState(made)).toBe(false);
    expect(isUnpaidFinalState('expired')).toBe(false);
    expect([...UNPAID_FINAL_STATES].sort()).toEqual(['canceled', 'refunded']);
  });

  it('splits the phases into sendable and not, never sent being the unsendable ones and not_sent', () => {
    expect([...SENDABLE_PHASES, ...UNSENDABLE_PHASES].sort()).toEqual([...PHASES].sort());
    expect(NEVER_SENT_PHASES).toEqual([...UNSENDABLE_PHASES, 'not_sent']);
  });

  it('a final state is final, but canceled only while unfunded', () => {
    for (const state of FINAL_STATES) expect(isFinal(state, false)).toBe(true);
    expect(isFinal('canceled', true)).toBe(false);
    expect(isFinal('stuck', false)).toBe(false);
  });

  it('counts against the budget what is being funded, funded, or held after a funding call', () => {
    expect(committedToBudget({ phase: 'funding', funded_at: null, fund_attempts: 1 })).toBe(true);
    expect(committedToBudget({ phase: 'final', funded_at: '2026-03-01T00:00:00Z', fund_attempts: 1 })).toBe(true);
    expect(committedToBudget({ phase: 'held', funded_at: null, fund_attempts: 1 })).toBe(true);
    expect(committedToBudget({ phase: 'held', funded_at: null, fund_attempts: 0 })).toBe(false);
    expect(committedToBudget({ phase: 'created', funded_at: null, fund_attempts: 0 })).toBe(false);
  });

  it('trusts an updated_at up to the clock skew allowed, and no further', () => {
    const now = Date.parse('2026-03-05T12:00:00.000Z');
    const at = (ms: number): string => new Date(ms).toISOString();
    expect(trustedUpdatedAt(at(now + MAX_CLOCK_SKEW_MS), now)).toBe(at(now + MAX_CLOCK_SKEW_MS));
    expect(trustedUpdatedAt(at(now + MAX_CLOCK_SKEW_MS + 1), now)).toBeNull();
    expect(isNewer({ state: 'processing', at: at(now), funded: true }, { state: 'paid', at: null })).toBe(false);
  });
});

describe('the checked conversions at the store\'s edge', () => {
  it('pass every word of the vocabulary and refuse any other, naming it', () => {
    for (const phase of PHASES) expect(phaseOf(phase)).toBe(phase);
    for (const reason of Object.values(REASONS)) expect(reasonCodeOf(reason)).toBe(reason);
    expect(reasonCodeOf(null)).toBeNull();
    expect(() => phaseOf('sent')).toThrow(/phase "sent"/);
    expect(() => phaseOf('Final')).toThrow(/phase "Final"/);
    expect(() => reasonCodeOf('because')).toThrow(/"because"/);
  });
});
