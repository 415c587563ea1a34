import { describe, expect, it } from 'vitest';
import { duplicatesDigest, unallowedHolds } from '../../src/approvals/duplicates-digest.js';
import type { Statement } from '../../src/approvals/statement.js';
import { parseStatement, statementBytes, statementDifferences } from '../../src/approvals/statement.js';

const statement: Statement = {
  deployment: 'd'.repeat(32), batch: 'B1', file_sha256: 'f'.repeat(64), rows: 2, rows_sha256: 'r'.repeat(64),
  totals: { EUR: '60000' }, ceiling: { EUR: '61800' }, expires_at: '2026-11-27T15:00:00.000Z',
};
const found = (allowedBy: string | null) => [
  { line: 3, action: 'hold', allowed_by: allowedBy, allowed_reason: allowedBy ? 'second invoice' : null, twin: { batch_id: 'B0', line: 2 } },
  { line: 2, action: 'warn', allowed_by: null, allowed_reason: null, twin: { batch_id: 'B0', line: 4 } },
];

describe('the possible duplicates in what approvers sign', () => {
  it('leaves the bytes of a statement of a batch with none exactly as they were signed before the field existed', () => {
    expect(statementBytes(statement).toString('utf8')).toBe(`paybatch approval v2\n{"batch":"B1","deployment":"${'d'.repeat(32)}","ceiling":{"EUR":"61800"},"expires_at":"2026-11-27T15:00:00.000Z","file_sha256":"${'f'.repeat(64)}","rows":2,"rows_sha256":"${'r'.repeat(64)}","totals":{"EUR":"60000"}}`);
    expect(duplicatesDigest([])).toBeUndefined();
  });

  it('changes with an allowance: a statement signed before it no longer matches the batch', () => {
    const before = duplicatesDigest(found(null));
    const after = duplicatesDigest(found('Grace Hopper'));
    expect(before).toMatch(/^[0-9a-f]{64}$/);
    expect(after).not.toBe(before);
    // In line order, whatever order the store gives.
    expect(duplicatesDigest([...found(null)].reverse())).toBe(before);
    const signed = { ...statement, duplicates_sha256: before as string };
    expect(statementBytes(signed).toString('utf8')).toContain(`"duplicates_sha256":"${before as string}"`);
    expect(statementDifferences(signed, { ...statement, duplicates_sha256: after as string })).toEqual([`duplicates_sha256: approved "${before as string}", now "${after as string}"`]);
    expect(statementDifferences(statement, signed)).toEqual([`duplicates_sha256: approved null, now "${before as string}"`]);
    expect(parseStatement(JSON.stringify(signed))).toEqual(signed);
    expect(parseStatement(JSON.stringify(statement))).toEqual(statement);
  });

  it('names the lines held with no allowance', () => {
    expect([...unallowedHolds(found(null))]).toEqual([3]);
    expect([...unallowedHolds(found('Grace Hopper'))]).toEqual([]);
  });
});
