/** The console labels a row's amounts for what they are: to pay, paid out, not paid; funded, refunded, not funded. */
import { describe, expect, it } from 'vitest';
import type { Statement } from '../../src/approvals/statement.js';
import { fundingLabel, major, payoutLabel } from '../../src/console/format.js';
import { approvalPage } from '../../src/console/views/approvals.js';
import type { Preview } from '../../src/engine/preview.js';

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

describe('the approval page, before anyone signs', () => {
  const preview: Preview = {
    subject: 'batch B1 (pay.csv)', deployment: 'd', file_sha256: 'f'.repeat(64), status: 'accepted, approval awaiting',
    rows: { to_send: 3, invalid: 0, already_used: [] }, invalid: [], totals: { GBP: '10000005000' }, largest_row: { GBP: '9999999999' },
    funding_estimate: { USD: { minor: '3182', exact: true, rows_without_estimate: 0 } }, proposed_ceiling: { USD: '3182' }, inactive_corridors: null,
    required_approvers: { count: 1, because: ['1 for every batch'] }, approvals: [], expires_at: null, rows_sha256: 'r'.repeat(64), payees: [], possible_duplicates: [],
    outliers: [{ line: 4, external_id: 'TYPO-1', currency: 'GBP', amount: '9999999999', median: '2500', because: ['times_median'], message: "99,999,999.99 GBP is over 10 times the batch's median 25.00 GBP: check it before it is approved" }],
  };
  const statement: Statement = {
    deployment: 'd', batch: 'B1', file_sha256: 'f'.repeat(64), rows: 3, rows_sha256: 'r'.repeat(64), totals: { GBP: '10000005000' }, ceiling: { USD: '3182' }, expires_at: '2026-11-28T00:00:00.000Z',
  } as Statement;
  const html = approvalPage({ person: 'ada', role: 'approver', csrf: 't', readOnly: false }, 'B1', { preview, statement, ceiling: {}, query: '' });

  it('warns of the outlier before the facts and the form', () => {
    expect(html).toMatch(/Amounts to check before approving \(1\)/);
    expect(html).toContain('99,999,999.99 GBP is over 10 times the batch&#39;s median 25.00 GBP');
    expect(html.indexOf('Amounts to check')).toBeLessThan(html.indexOf('This is what you sign'));
  });

  it('shows major units beside the minor units the statement carries', () => {
    expect(html).toContain('"ceiling" in major units</dt><dd>31.82 USD (3182 in minor units)</dd>');
    expect(html).toContain('"totals" in major units</dt><dd>100,000,050.00 GBP (10000005000 in minor units)</dd>');
  });
});
