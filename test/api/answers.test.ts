import { describe, expect, it } from 'vitest';
import { errorItems, parseTransaction, unwrap } from '../../src/api/answers.js';

describe('reading service answers [D4], [D5]', () => {
  it('accepts bare and wrapped objects', () => {
    expect(unwrap({ id: 'x' })).toEqual({ object: { id: 'x' }, meta: undefined });
    expect(unwrap({ object: { id: 'x' }, meta: { page: 1 } })).toEqual({ object: { id: 'x' }, meta: { page: 1 } });
    expect(unwrap([1, 2])).toEqual({ object: [1, 2], meta: undefined });
    expect(unwrap({ errors: {}, meta: { existing: { transaction: { id: 't' } } } }).meta).toEqual({ existing: { transaction: { id: 't' } } });
  });

  it('flattens every shape of errors', () => {
    expect(errorItems({ errors: ['corridor is not active'] })).toEqual([{ field: 'base', message: 'corridor is not active' }]);
    expect(errorItems({ errors: { 'recipient.iban': ['is invalid'] } })).toEqual([{ field: 'recipient.iban', message: 'is invalid' }]);
    expect(errorItems({ errors: { phone_number: [{ error: 'invalid' }] } })).toEqual([{ field: 'phone_number', message: 'invalid' }]);
    expect(errorItems({ object: { errors: { external_id: ['has already been taken'] } }, meta: {} })).toEqual([{ field: 'external_id', message: 'has already been taken' }]);
    expect(errorItems('not json')).toEqual([]);
  });

  it('reads a transaction, tolerating the live spellings, and refuses what is not one', () => {
    const tx = parseTransaction({ id: 't1', external_id: 'E1', state: 'error', state_reason: 'x', state_reason_details: { code: 'recipient_phone_number_invalid' }, input_amount_in_cents: '100', input_currency_code: 'USD', output_amount_in_cents: 79, may_cancel: true });
    expect(tx).toMatchObject({ id: 't1', state: 'error', state_reason_code: 'recipient_phone_number_invalid', input_amount_in_cents: '100', input_currency: 'USD', output_amount_in_cents: '79', may_cancel: true });
    expect(parseTransaction({ id: 't1', state: 'paid' })).toBeNull();
    expect(parseTransaction(null)).toBeNull();
    expect(parseTransaction({ id: 't1', external_id: 'E', state: 'paid', input_amount_in_cents: '1.5' })?.input_amount_in_cents).toBeNull();
  });
});
