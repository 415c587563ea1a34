import { describe, expect, it } from 'vitest';
import { BatchRules } from '../../src/validate/batch-rules.js';
import { validateRow } from '../../src/validate/row-rules.js';
import { RULES, validRow } from '../helpers/rows.js';

function run(rows: Record<string, string>[]) {
  const rules = new BatchRules();
  return rows.map((overrides, index) => {
    const verdict = validateRow(validRow('gbr', overrides), RULES);
    return rules.check(index + 2, verdict.values, verdict.amountMinor);
  });
}

describe('rules across the rows of a file', () => {
  it('makes the same external_id twice an error on both lines, and a third time on that line too', () => {
    const [first, second, third, other] = run([{ external_id: 'A' }, { external_id: 'A', output_amount: '5' }, { external_id: 'A', output_amount: '6' }, { external_id: 'B', output_amount: '7' }]);
    expect(first?.errors).toEqual([]);
    expect(second?.errors).toEqual([expect.objectContaining({ field: 'external_id', code: 'duplicate_external_id', message: expect.stringMatching(/also on line 2/) })]);
    expect(second?.earlier).toEqual([{ line: 2, issue: expect.objectContaining({ code: 'duplicate_external_id', message: expect.stringMatching(/also on line 3/) }) }]);
    expect(third?.errors.map((e) => e.code)).toEqual(['duplicate_external_id']);
    expect(third?.earlier).toEqual([]);
    expect(other?.errors).toEqual([]);
  });

  it('warns when the same recipient account gets the same amount twice', () => {
    const [, again, otherAmount] = run([{ external_id: 'A' }, { external_id: 'B' }, { external_id: 'C', output_amount: '99' }]);
    expect(again?.warnings).toEqual([expect.objectContaining({ code: 'repeated_payout', message: expect.stringMatching(/line 2/) })]);
    expect(again?.errors).toEqual([]);
    expect(otherAmount?.warnings).toEqual([]);
  });

  it('warns when one sender_external_id comes with different details', () => {
    const [, same, changed] = run([
      { external_id: 'A', output_amount: '1' },
      { external_id: 'B', output_amount: '2' },
      { external_id: 'C', output_amount: '3', sender_last_name: 'King' },
    ]);
    expect(same?.warnings).toEqual([]);
    expect(changed?.warnings).toEqual([expect.objectContaining({ field: 'sender_external_id', code: 'sender_details_differ', message: expect.stringMatching(/line 2/) })]);
  });
});
