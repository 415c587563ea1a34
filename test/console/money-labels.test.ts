/** The console labels a row's amounts for what they are: to pay, paid out, not paid; funded, refunded, not funded. */
import { describe, expect, it } from 'vitest';
import { fundingLabel, major, payoutLabel } from '../../src/console/format.js';

describe('console money cells', () => {
  it('calls an amount paid out only once the row is paid', () => {
    expect(payoutLabel('paid')).toBe('paid out');
    expect(payoutLabel('not_sent_yet')).toBe('to pay');
    expect(payoutLabel('pending')).toBe('to pay');
    expect(payoutLabel('refunded')).toBe('not paid');
    expect(payoutLabel('external_id_already_used')).toBe('not paid');
    expect(payoutLabel('invalid')).toBe('not paid');
  });

  it('calls funding refunded, funded or not funded', () => {
    expect(fundingLabel('refunded', true)).toBe('refunded');
    expect(fundingLabel('paid', true)).toBe('funded');
    expect(fundingLabel('not_sent_yet', false)).toBe('not funded');
  });

  it('formats money cells with the one formatter', () => {
    expect(major('123456789', 'GBP')).toBe('1,234,567.89 GBP');
    expect(major(null, 'GBP')).toBe('');
  });
});
