import { describe, expect, it } from 'vitest';
import type { Twin } from '../../src/engine/duplicates.js';
import type { Phase, TxState } from '../../src/payout-states.js';
import { decideDuplicate, describeDecision, twinStanding, windowStart } from '../../src/engine/duplicates.js';
import { SameFileTwins, findingsOf } from '../../src/engine/duplicate-screen.js';

const twin = (phase: Phase, state: TxState | null, at = '2026-11-20T10:00:00.000Z'): Twin => ({ batch_id: 'B1', line: 2, external_id: 'PAY-1', phase, state, at });
const allowance = { person: 'Grace Hopper', reason: 'second invoice', at: '2026-11-27T10:00:00.000Z' };

describe('what a twin is', () => {
  it('paid, in flight (anything that may still pay), or ended unpaid', () => {
    expect(twinStanding(twin('final', 'paid'))).toBe('paid');
    for (const [phase, state] of [['funded', 'stuck'], ['funded', 'processing'], ['created', 'initial'], ['funded', 'error'], ['funded', 'manual'], ['held', null], ['ready', null], ['duplicate_hold', null], ['cancelling', 'stuck']] as const) {
      expect(twinStanding(twin(phase, state))).toBe('in_flight');
    }
    for (const [phase, state] of [['final', 'refunded'], ['final', 'canceled'], ['not_sent', null], ['refused', null], ['invalid', null]] as const) {
      expect(twinStanding(twin(phase, state))).toBe('unpaid');
    }
  });
});

describe('decideDuplicate', () => {
  it('sends a row with no twin, or only twins that ended unpaid', () => {
    expect(decideDuplicate([], 'hold', null)).toEqual({ action: 'send', why: 'no_twin' });
    expect(decideDuplicate([twin('final', 'refunded')], 'hold', null)).toEqual({ action: 'send', why: 'no_twin' });
  });

  it('holds, warns or allows by the policy when the twin was paid', () => {
    const paid = twin('final', 'paid');
    expect(decideDuplicate([paid], 'hold', null)).toEqual({ action: 'hold', twin: paid, why: 'policy_hold' });
    expect(decideDuplicate([paid], 'warn', null)).toEqual({ action: 'warn', twin: paid });
    expect(decideDuplicate([paid], 'allow', null)).toEqual({ action: 'send', why: 'allowed_by_policy' });
    expect(decideDuplicate([paid], 'hold', allowance)).toEqual({ action: 'send', why: 'allowed_by_person' });
  });

  it('always holds a row whose twin may still pay: whatever the policy, whoever allows it', () => {
    const stuck = twin('funded', 'stuck');
    for (const policy of ['hold', 'warn', 'allow'] as const) {
      for (const given of [null, allowance]) expect(decideDuplicate([twin('final', 'paid'), stuck], policy, given)).toEqual({ action: 'hold', twin: stuck, why: 'twin_in_flight' });
    }
  });

  it('names the latest paid twin', () => {
    const older = twin('final', 'paid', '2026-11-01T00:00:00.000Z');
    const newer = { ...twin('final', 'paid', '2026-11-25T00:00:00.000Z'), batch_id: 'B2' };
    expect(decideDuplicate([older, newer], 'warn', null)).toEqual({ action: 'warn', twin: newer });
  });

  it('says why with the twin: batch, line, external_id, state, date; never to pay again while it may pay', () => {
    const held = decideDuplicate([twin('funded', 'stuck')], 'warn', null);
    if (held.action === 'send') throw new Error('held');
    expect(describeDecision(held)).toMatch(/^possible duplicate of batch B1 line 2 \(external_id PAY-1, stuck, 2026-11-20\), which may still pay: held/);
    expect(describeDecision(held)).toMatch(/never pay this again by hand/);
  });
});

describe('the window', () => {
  it('days or hours back from when the row was received; off looks for none', () => {
    const at = Date.parse('2026-11-27T12:00:00.000Z');
    expect(windowStart(at, '30d')).toBe('2026-10-28T12:00:00.000Z');
    expect(windowStart(at, '12h')).toBe('2026-11-27T00:00:00.000Z');
    expect(windowStart(at, 'off')).toBeNull();
  });
});

describe('findingsOf', () => {
  it('holds or warns each row by its own twins, and leaves the rest', () => {
    const rows = [{ line: 2, external_id: 'A' }, { line: 3, external_id: 'B' }, { line: 4, external_id: 'C' }];
    const twins = [{ ...twin('final', 'paid'), of_line: 2 }, { ...twin('funded', 'stuck'), of_line: 4 }];
    expect(findingsOf('B9', rows, twins, 'warn').map((f) => [f.line, f.action])).toEqual([[2, 'warn'], [4, 'hold']]);
    expect(findingsOf('B9', rows, twins, 'allow').map((f) => [f.line, f.action])).toEqual([[4, 'hold']]);
  });
});

describe('an earlier line of the same file', () => {
  const entry = (line: number, id: string, amount = '1000') => ({ line, external_id: id, key: 'iban:DE89370400440532013000', currency: 'EUR', amount });

  it('is the twin of each later line paying the same account, amount and currency: the first line is sent, the later ones are decided by the policy', () => {
    const sameFile = new SameFileTwins('B9', '2026-11-27T10:00:00.000Z');
    const rows = [entry(2, 'A'), entry(3, 'B', '2000'), entry(4, 'C')];
    const twins = sameFile.of(rows);
    expect(twins).toEqual([{ of_line: 4, batch_id: 'B9', line: 2, external_id: 'A', phase: 'ready', state: null, at: '2026-11-27T10:00:00.000Z', same_file: true }]);
    // Across the chunks of a batch: a later chunk's row still meets line 2.
    expect(sameFile.of([entry(1002, 'D')]).map((t) => [t.of_line, t.line])).toEqual([[1002, 2]]);
    expect(findingsOf('B9', rows, twins, 'hold').map((f) => [f.line, f.action, f.detail])).toEqual([[4, 'hold', 'possible duplicate of line 2 of the same file (external_id A, sent first): held until a person allows it (paybatch allow) or cancels it']]);
    expect(findingsOf('B9', rows, twins, 'warn').map((f) => [f.line, f.action])).toEqual([[4, 'warn']]);
    expect(findingsOf('B9', rows, twins, 'allow')).toEqual([]);
  });

  it('is never "in flight": the policy and a person decide, unless a twin of another batch may still pay', () => {
    const earlier = { ...twin('ready', null), same_file: true };
    expect(twinStanding(earlier)).toBe('same_file');
    expect(decideDuplicate([earlier], 'hold', null)).toEqual({ action: 'hold', twin: earlier, why: 'policy_hold' });
    expect(decideDuplicate([earlier], 'hold', allowance)).toEqual({ action: 'send', why: 'allowed_by_person' });
    const stuck = twin('funded', 'stuck');
    expect(decideDuplicate([earlier, stuck], 'allow', allowance)).toEqual({ action: 'hold', twin: stuck, why: 'twin_in_flight' });
  });
});
