/**
 * The correction form of an external_id (X~R1) reaches only a correction of X:
 * a correction row naming an invalid original (which has no external_id to
 * derive from) may not carry another row's correction id such as INV-7~R1,
 * which would pay INV-7 again while it may still pay (found by an attack: it
 * was once taken as "the row's own").
 */
import { describe, expect, it } from 'vitest';
import type { CorrectionStore } from '../../src/engine/correction-intake.js';
import { checkCorrections } from '../../src/engine/correction-intake.js';
import { checkCorrectionId } from '../../src/validate/correction-id.js';
import { Findings } from '../../src/validate/findings.js';

describe('a correction-form id reaches only a correction of its own original', () => {
  it('a row naming an invalid original without external_id may not carry another row\'s correction id', async () => {
    // The row as written in a corrections file: original_batch and original_line filled, so the reserved-form rule lets it by.
    const values = { external_id: 'INV-7~R1', original_batch: 'B-OLD', original_line: '3' };
    const findings = new Findings();
    checkCorrectionId(values as never, findings);
    expect(findings.errors).toEqual([]);

    const invalidated: unknown[] = [];
    const store = {
      correctionLinks: async () => [{ line: 2, external_id: 'INV-7~R1', original_batch: 'B-OLD', original_line: 3 }],
      setCorrectsBatch: async () => undefined,
      invalidateRow: async (_batch: string, _line: number, issue: unknown) => { invalidated.push(issue); },
      // B-OLD line 3: a row refused at validation (no external_id); INV-7 is some other row, which may still pay.
      row: async () => ({ phase: 'invalid', state: null, outcome: null, external_id: null }),
    } as unknown as CorrectionStore;
    const result = await checkCorrections('B-NEW', store);
    expect(result.refused).toBe(1);
  });
});
