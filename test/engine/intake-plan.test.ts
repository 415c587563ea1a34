/** planIntake: what to do with a file, from what is known of it (pure; intake.ts applies it). */
import { describe, expect, it } from 'vitest';
import type { IntakeFacts } from '../../src/engine/intake-plan.js';
import { planIntake } from '../../src/engine/intake-plan.js';
import type { ValidationReport } from '../../src/batch/validate-file.js';

const facts = (over: Partial<IntakeFacts>): IntakeFacts => ({ name: 'pay.csv', maxFileBytes: 1000, force: false, policy: 'reject_file', ...over });
const earlier = { id: 'B0', file_name: 'old.csv', sha256: 'ab', received_at: '2026-03-01T00:00:00.000Z' } as NonNullable<IntakeFacts['earlier']>;
const report = { file: 'x', sha256: 'ab', delimiter: ',', rows: 3, valid: 2, invalid: 1, totals: {}, errors: [], warnings: [] } as unknown as ValidationReport;

describe('planIntake', () => {
  it('waits for a file not complete yet, and takes one with nothing against it', () => {
    expect(planIntake(facts({ readiness: { ready: false, reason: 'still growing', retryInMs: 500 } }))).toEqual({ kind: 'wait', reason: 'still growing', retryInMs: 500 });
    expect(planIntake(facts({ readiness: { ready: true }, entry: { regularFile: true, size: 10 }, earlier: null }))).toEqual({ kind: 'take' });
  });

  it('refuses unread what is not a regular file, or is over the size limit, with no batch to reject', () => {
    expect(planIntake(facts({ entry: { regularFile: false, size: 10 } }))).toMatchObject({ kind: 'refuse', refusal: { kind: 'not_read', rejectBatch: null, files: [{ suffix: '.report.txt' }] } });
    const big = planIntake(facts({ entry: { regularFile: true, size: 1001 } }));
    expect(big).toMatchObject({ refusal: { reason: 'it is 1001 bytes, over the limit of 1000 bytes (batch.max_file_bytes)' } });
  });

  it('refuses the same content again unless forced, with a note naming the earlier batch', () => {
    const plan = planIntake(facts({ sha256: 'ab', earlier }));
    expect(plan).toMatchObject({ refusal: { kind: 'duplicate', files: [{ suffix: '.duplicate.txt', text: expect.stringContaining('as batch B0, taken from old.csv') }] } });
    expect(planIntake(facts({ sha256: 'ab', earlier, force: true }))).toEqual({ kind: 'take' });
  });

  it('rejects the batch of a file unreadable, or not matching its manifest', () => {
    expect(planIntake(facts({ batch: 'B1', unreadable: { code: 'file_unreadable', message: 'not UTF-8', line: 4 } }))).toMatchObject({
      refusal: { kind: 'unreadable', rejectBatch: 'file_unreadable: not UTF-8', files: [{ text: 'pay.csv, line 4: cannot be read as a batch (file_unreadable): not UTF-8\nNothing of it was sent.\n' }] },
    });
    expect(planIntake(facts({ batch: 'B1', manifestProblems: ['rows: 3, manifest says 4'] }))).toMatchObject({ refusal: { kind: 'not_read', rejectBatch: 'the file does not match its manifest: rows: 3, manifest says 4' } });
    expect(planIntake(facts({ batch: 'B1', manifestProblems: [] }))).toEqual({ kind: 'take' });
  });

  it('applies the invalid-rows policy: reject_file refuses with both reports, skip_invalid takes the file', () => {
    const plan = planIntake(facts({ batch: 'B1', report }));
    expect(plan).toMatchObject({ refusal: { kind: 'rejected', rejectBatch: '1 invalid rows (policy reject_file)' } });
    expect(plan.kind === 'refuse' && plan.refusal.files.map((f) => f.suffix)).toEqual(['.report.txt', '.report.json']);
    expect(plan.kind === 'refuse' && JSON.parse(plan.refusal.files[1]?.text ?? '{}')).toMatchObject({ batch: 'B1', file: 'pay.csv', invalid: 1 });
    expect(planIntake(facts({ batch: 'B1', report, policy: 'skip_invalid' }))).toEqual({ kind: 'take' });
  });

  it('sets aside a copy whose intake another worker recovered, without rejecting that worker\'s batch', () => {
    expect(planIntake(facts({ batch: 'B1', recoveredElsewhere: true }))).toMatchObject({ refusal: { kind: 'not_read', rejectBatch: null } });
  });
});
