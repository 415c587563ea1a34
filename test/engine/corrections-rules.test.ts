/** The pure rules of corrections: derived external ids, and which originals may be paid again. */
import { describe, expect, it } from 'vitest';
import type { Phase } from '../../src/payout-states.js';
import { correctable, correctionExternalId, unpaid } from '../../src/engine/corrections.js';
import { CORRIDORS } from '../../src/validate/corridors.js';
import type { RowFields } from '../../src/validate/fields.js';
import { validateRow } from '../../src/validate/row-rules.js';

describe('corrections, the rules', () => {
  it('derives a correction\'s external_id from its original\'s, deterministically, within 255 characters', () => {
    expect(correctionExternalId('PAY-1')).toBe('PAY-1~R1');
    expect(correctionExternalId('PAY-1~R1')).toBe('PAY-1~R2');
    expect(correctionExternalId('PAY-1~R9')).toBe('PAY-1~R10');
    const long = 'X'.repeat(255);
    const first = correctionExternalId(long);
    expect(first.length).toBeLessThanOrEqual(255);
    expect(correctionExternalId(long)).toBe(first);
    expect(correctionExternalId(first)).toMatch(/~R2$/);
    expect(correctionExternalId(first).length).toBeLessThanOrEqual(255);
    expect(correctionExternalId(`${'Y'.repeat(254)}`)).not.toBe(correctionExternalId(`${'Y'.repeat(253)}Z`));
  });

  it('takes a correction only from an original that can no longer pay and was not paid', () => {
    const ok = (phase: Phase, state: string | null = null, outcome: string | null = null) => correctable({ phase, state, outcome }).ok;
    expect(ok('invalid')).toBe(true);
    expect(ok('not_sent', null, 'insufficient_funds')).toBe(true);
    expect(ok('refused', null, 'quote_rejected')).toBe(true);
    expect(ok('refused', null, 'external_id_already_used')).toBe(false);
    expect(ok('final', 'refunded')).toBe(true);
    expect(ok('final', 'canceled')).toBe(true);
    expect(ok('final', null, 'rejected_by_service')).toBe(true);
    expect(ok('final', 'paid')).toBe(false);
    for (const [phase, state] of [['created', 'initial'], ['funded', 'processing'], ['funded', 'stuck'], ['funded', 'error'], ['funded', 'manual'], ['cancelling', 'error'], ['held', 'pending'], ['ready', null], ['creating', null], ['funding', null]] as const) {
      expect(ok(phase, state), `${phase}/${state}`).toBe(false);
    }
    expect(correctable({ phase: 'funded', state: 'stuck', outcome: null })).toMatchObject({ code: 'original_may_still_pay', why: expect.stringContaining('stuck') });
  });

  it('lists a held row so it is not forgotten, and says to cancel it first', () => {
    expect(unpaid({ phase: 'held', state: 'pending', outcome: 'answer_mismatch', reason: '', code: 'answer_mismatch', errorColumns: [] })).toMatchObject({ state: 'answer_mismatch', toFix: expect.stringMatching(/cancel the original first/) });
    expect(unpaid({ phase: 'final', state: 'paid', outcome: null, reason: '', code: '', errorColumns: [] })).toBeNull();
    expect(unpaid({ phase: 'final', state: 'refunded', outcome: 'cancelled_on_request', reason: 'cancelled on request by ada (it was error: recipient_bank_account_invalid)', code: 'cancelled_on_request', errorColumns: [] })?.toFix).toMatch(/recipient_bank_account/);
    expect(unpaid({ phase: 'not_sent', state: null, outcome: 'insufficient_funds', reason: '', code: 'insufficient_funds', errorColumns: [] })?.toFix).toMatch(/paybatch retry/);
  });

  it('names in to_fix only columns of the row\'s corridor: no bank account for a cash payout', () => {
    const required = (id: string): readonly string[] => (CORRIDORS.find((c) => c.id === id) as { required: string[] }).required;
    const accountInvalid = (corridorColumns: readonly string[] | null) => unpaid({
      phase: 'final', state: 'refunded', outcome: 'cancelled_on_request', reason: 'cancelled on request by ada (it was manual: recipient_account_invalid)', code: 'cancelled_on_request', errorColumns: [], corridorColumns,
    })?.toFix;
    expect(accountInvalid(required('nga-cash'))).toBe('recipient_phone_number');
    expect(accountInvalid(required('gbr-bank'))).toBe('recipient_bank_account recipient_sort_code');
    expect(accountInvalid(required('eur-iban-bank'))).toBe('recipient_iban');
    expect(accountInvalid(required('nga-bank'))).toBe('recipient_bank_account recipient_bank_code');
    // No corridor known (the row's corridor does not exist): every account column, as before.
    expect(accountInvalid(null)).toBe('recipient_bank_account recipient_iban recipient_sort_code');
  });

  it('reserves the correction form of an external_id for rows that name their original', () => {
    const options = { today: '2026-11-27', decimalSeparator: '.' as const, maxRowAmount: {} };
    const codes = (fields: RowFields): string[] => validateRow({ ...fields }, options).errors.filter((e) => e.field === 'external_id').map((e) => e.code);
    expect(codes({ external_id: 'KC-000002~R1' })).toEqual(['correction_id_reserved']);
    expect(codes({ external_id: 'KC-000002~R12' })).toEqual(['correction_id_reserved']);
    expect(validateRow({ external_id: 'KC-000002~R1' }, options).errors.find((e) => e.code === 'correction_id_reserved')?.message).toMatch(/form of a correction of KC-000002 .*original_batch and original_line/);
    // Naming an original, it is a correction: intake checks it against that original (correction-intake.ts).
    expect(codes({ external_id: 'KC-000002~R1', original_batch: 'B20261127-0000abcd', original_line: '2' })).toEqual([]);
    for (const plain of ['KC-000002', 'KC~R', 'KC~R0', 'KC~R01', 'KC~r1', 'KC~R1x']) expect(codes({ external_id: plain }), plain).toEqual([]);
  });
});
