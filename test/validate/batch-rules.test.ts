import { describe, expect, it } from 'vitest';
import { BatchRules } from '../../src/validate/batch-rules.js';
import { validateRow } from '../../src/validate/row-rules.js';
import { RULES, validRow } from '../helpers/rows.js';

function run(rows: Record<string, string>[]) {
  const rules = new BatchRules();
  rows.forEach((overrides, index) => {
    const verdict = validateRow(validRow('gbr', overrides), RULES);
    rules.check(index + 2, verdict.values, verdict.amountMinor, verdict.senderFingerprint);
  });
  const late = [...rules.finish()];
  const at = (severity: string) => late.filter((f) => f.severity === severity).map((f) => `${f.line}:${f.issue.code}:${f.issue.message}`);
  return { errors: at('error'), warnings: at('warning') };
}

describe('rules across the rows of a file', () => {
  it('makes the same external_id an error on every line that has it', () => {
    const { errors } = run([{ external_id: 'A' }, { external_id: 'A', output_amount: '5' }, { external_id: 'A', output_amount: '6' }, { external_id: 'B', output_amount: '7' }]);
    expect(errors.sort()).toEqual([
      '2:duplicate_external_id:this external_id is also on line 3; each row needs its own',
      '3:duplicate_external_id:this external_id is also on line 2; each row needs its own',
      '4:duplicate_external_id:this external_id is also on line 2; each row needs its own',
    ]);
  });

  it('tells ids apart that differ in one character, and ignores rows without one', () => {
    const { errors } = run([{ external_id: 'A-1' }, { external_id: 'A-2', output_amount: '5' }, { external_id: 'a-1', output_amount: '6' }]);
    expect(errors).toEqual([]);
  });

  it('warns when the same recipient account gets the same amount twice', () => {
    const { warnings, errors } = run([{ external_id: 'A' }, { external_id: 'B' }, { external_id: 'C', output_amount: '99' }]);
    expect(warnings).toEqual(['3:repeated_payout:the same recipient and amount as line 2: check it is meant to be paid twice']);
    expect(errors).toEqual([]);
  });

  it('warns when one sender_external_id comes with different details than its first row', () => {
    const { warnings } = run([
      { external_id: 'A', output_amount: '1' },
      { external_id: 'B', output_amount: '2' },
      { external_id: 'C', output_amount: '3', sender_last_name: 'King' },
      { external_id: 'D', output_amount: '4', sender_external_id: 'OTHER', sender_last_name: 'Byron' },
    ]);
    expect(warnings).toEqual(['4:sender_details_differ:this sender_external_id has other details than on line 2; the later ones will replace them at the service']);
  });
});

describe('line numbers kept sparsely', () => {
  it('gives back every row\'s line, through shifts from multi-line rows and blank lines', async () => {
    const { LineColumn } = await import('../../src/validate/row-columns.js');
    const lines = [2, 3, 5, 6, 7, 12, 13, 14, 20];
    const column = new LineColumn();
    lines.forEach((line) => column.push(line));
    expect(lines.map((_, row) => column.get(row))).toEqual(lines);
    const plain = new LineColumn();
    for (let row = 0; row < 1000; row++) plain.push(row + 2);
    expect(plain.get(0)).toBe(2);
    expect(plain.get(999)).toBe(1001);
  });
});

describe('per-row columns', () => {
  it('keep their values when room is reserved, and still grow past the reservation', async () => {
    const { U32Column } = await import('../../src/validate/row-columns.js');
    const column = new U32Column(4);
    for (let i = 0; i < 6; i++) column.push(i * 10);
    column.reserve(100);
    for (let i = 6; i < 300; i++) column.push(i * 10);
    expect(column.length).toBe(300);
    expect([column.get(0), column.get(5), column.get(6), column.get(299)]).toEqual([0, 50, 60, 2990]);
    expect(Array.from(column.view().subarray(0, 3))).toEqual([0, 10, 20]);
  });
});
