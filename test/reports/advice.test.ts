import { describe, expect, it } from 'vitest';
import type { AdviceInput } from '../../src/reports/advice.js';
import { adviceFor } from '../../src/reports/advice.js';
import type { Phase } from '../../src/payout-states.js';

const row = (phase: Phase, state: string | null, extra: Partial<AdviceInput> = {}): AdviceInput => ({ batch_id: 'B1', external_id: 'PAY-1', phase, state, outcome: null, ...extra });
/** Advice to pay again other than through corrections (the warnings not to are left out first). */
const PAY_AGAIN = /pay (it )?again(?! through corrections)(?!, through corrections)(?! only through corrections)/i;
const offers = (advice: string): string => advice.replace(/(do not|never) pay (it|this) again/gi, '');

describe('advice by state, never leading to paying twice', () => {
  it('a stuck or processing row the service will not let paybatch stop: cannot be stopped, wait or ask, never pay again', () => {
    for (const state of ['stuck', 'processing']) {
      for (const mayCancel of [false, null, undefined]) {
        const advice = adviceFor(row('funded', state, { may_cancel: mayCancel }));
        expect(advice).toMatch(/cannot stop it now/);
        expect(advice).toMatch(/wait for it, or ask the service/);
        expect(advice).toMatch(/Do not pay it again: it may still pay out/);
        expect(advice).not.toMatch(/paybatch cancel/);
        expect(offers(advice)).not.toMatch(PAY_AGAIN);
      }
    }
  });

  it('a row not sent yet: nothing to do, paybatch sends it; the batch named by the caller when the row does not say (a result row)', () => {
    for (const phase of ['ready', 'checking'] as const) {
      const advice = adviceFor(row(phase, null));
      expect(advice).toMatch(/^Not sent yet: paybatch sends it/);
      expect(offers(advice)).not.toMatch(PAY_AGAIN);
    }
    expect(adviceFor({ external_id: 'PAY-1', phase: 'funded', state: 'error', outcome: null }, 'B7')).toMatch(/paybatch cancel --batch B7 --external-id PAY-1/);
    expect(adviceFor({ external_id: 'PAY-1', phase: 'funded', state: 'error', outcome: null })).toMatch(/paybatch cancel --batch BATCH --external-id PAY-1/);
  });

  it('a row whose cancellation paybatch gave up sending: ask the service, never pay again; before that, in flight', () => {
    const advice = adviceFor(row('cancelling', 'error', { may_cancel: true, cancels_sent: 4 }));
    expect(advice).toMatch(/^paybatch sent its cancellation 3 times and the service still holds the payout as cancellable: ask the service/);
    expect(advice).toMatch(/Do not pay it again: it may still pay out/);
    expect(offers(advice)).not.toMatch(PAY_AGAIN);
    // Still being sent (three in all): the advice of its state, as for any row.
    expect(adviceFor(row('cancelling', 'error', { may_cancel: true, cancels_sent: 3 }))).toMatch(/^Failed at the service/);
  });

  it('a stuck row the service says may be cancelled: cancel, then pay again only through corrections once refunded', () => {
    const advice = adviceFor(row('funded', 'stuck', { may_cancel: true }));
    expect(advice).toMatch(/paybatch cancel --batch B1 --external-id PAY-1/);
    expect(advice).toMatch(/once it is refunded, pay it again through corrections/);
  });

  it('error and manual: cancel first, pay again only through corrections; unstoppable when may_cancel is false', () => {
    expect(adviceFor(row('funded', 'error'))).toMatch(/cancel it .*once it is refunded, pay it again through corrections/);
    expect(adviceFor(row('funded', 'manual'))).toMatch(/answer the service's request, or cancel it/);
    expect(adviceFor(row('funded', 'error', { may_cancel: false }))).toMatch(/cannot stop it now/);
    for (const state of ['error', 'manual', 'exception']) expect(offers(adviceFor(row('funded', state)))).not.toMatch(PAY_AGAIN);
  });

  it('pay again is offered only once the original can no longer pay', () => {
    expect(adviceFor(row('final', 'refunded'))).toMatch(/pay it again through corrections \(paybatch corrections B1\)/);
    expect(adviceFor(row('final', 'canceled'))).toMatch(/through corrections/);
    expect(adviceFor(row('final', 'paid'))).toBe('Paid: nothing to do.');
  });

  it('a row held as a possible duplicate: allow or cancel, nothing of it sent', () => {
    const advice = adviceFor(row('duplicate_hold', null, { outcome: 'possible_duplicate' }));
    expect(advice).toMatch(/paybatch allow B1 --external-id PAY-1 --reason TEXT --as NAME/);
    expect(advice).toMatch(/paybatch cancel --batch B1 --external-id PAY-1/);
    expect(advice).toMatch(/Nothing of it was sent/);
  });

  it('a row held for an answer that did not match: compare first, never pay again', () => {
    expect(adviceFor(row('held', 'stuck', { outcome: 'answer_mismatch' }))).toMatch(/Do not pay it again/);
  });
});
