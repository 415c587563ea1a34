import { describe, expect, it } from 'vitest';
import { recipientKey } from '../../src/validate/recipient-key.js';

const bank = (recipient: Record<string, string>) => recipientKey({ type: 'bank', recipient });

describe('the recipient account a row pays to, written one way', () => {
  it('an IBAN whatever its spacing and case', () => {
    expect(bank({ iban: 'DE89 3704 0044 0532 0130 00' })).toBe('iban:DE89370400440532013000');
    expect(bank({ iban: 'de89370400440532013000', bank_account: '123' })).toBe('iban:DE89370400440532013000');
  });

  it('a sort code and account, with or without dashes', () => {
    expect(bank({ sort_code: '08-99-99', bank_account: '66374958' })).toBe(bank({ sort_code: '089999', bank_account: '6637 4958' }));
    expect(bank({ sort_code: '08-99-99', bank_account: '66374958' })).not.toBe(bank({ sort_code: '08-99-98', bank_account: '66374958' }));
  });

  it('an account and bank code, in its country', () => {
    expect(bank({ country_code: 'NGA', bank_code: '058', bank_account: '0123456789' })).toBe('bank:NGA:058:0123456789');
    expect(bank({ country_code: 'NGA', bank_code: '058', bank_account: '0123456789' })).not.toBe(bank({ country_code: 'NGA', bank_code: '044', bank_account: '0123456789' }));
  });

  it('an account and BIC: the branch letters name no other account', () => {
    expect(bank({ country_code: 'USA', bic: 'CHASUS33XXX', bank_account: '000123' })).toBe(bank({ country_code: 'USA', bic: 'chasus33', bank_account: '000123' }));
  });

  it('a phone for cash pickup or mobile money, by its digits', () => {
    expect(recipientKey({ type: 'cash', recipient: { phone_number: '+234 803 000 0001', bank_account: '9' } })).toBe('phone:+2348030000001');
    expect(recipientKey({ type: 'mobile', recipient: { phone_number: '+2348030000001' } })).toBe('phone:+2348030000001');
  });

  it('nothing to pay to: no key, not checked', () => {
    expect(bank({ country_code: 'GBR' })).toBeNull();
    expect(recipientKey({ type: 'cash', recipient: {} })).toBeNull();
  });
});
