import { describe, expect, it } from 'vitest';
import { neutralise, resultState } from '../../src/reports/results.js';
import type { ResultRow } from '../../src/reports/results.js';

describe('result files', () => {
  it('neutralises text a spreadsheet would run as a formula, but not numbers or E.164 phones', () => {
    expect(neutralise('=HYPERLINK("http://x","y")')).toBe('\'=HYPERLINK("http://x","y")');
    expect(neutralise('+SUM(A1:A9)')).toBe("'+SUM(A1:A9)");
    expect(neutralise('-2+3')).toBe("'-2+3");
    expect(neutralise('@cmd')).toBe("'@cmd");
    expect(neutralise('\tx')).toBe("'\tx");
    expect(neutralise('-12.50')).toBe('-12.50');
    expect(neutralise('+2348031234567')).toBe('+2348031234567');
    expect(neutralise('Ada Lovelace')).toBe('Ada Lovelace');
  });

  it('names the state a person reads: the service\'s, or what paybatch decided', () => {
    const row = (fields: Partial<ResultRow>): ResultRow => ({
      line: 2, external_id: 'E', transaction_id: null, phase: 'final', outcome: null, outcome_detail: null, state: null, state_reason: null, state_reason_code: null,
      input_amount: null, input_currency: null, output_amount: null, output_currency: null, funded_at: null, errors: null, ...fields,
    });
    expect(resultState(row({ phase: 'invalid' }))).toBe('invalid');
    expect(resultState(row({ phase: 'not_sent', outcome: 'insufficient_funds' }))).toBe('insufficient_funds');
    expect(resultState(row({ phase: 'refused', outcome: 'external_id_already_used' }))).toBe('external_id_already_used');
    expect(resultState(row({ phase: 'final', outcome: 'rejected_by_service' }))).toBe('rejected_by_service');
    expect(resultState(row({ phase: 'funded', state: 'manual' }))).toBe('manual');
  });
});
