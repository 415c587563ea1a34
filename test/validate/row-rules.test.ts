import { describe, expect, it } from 'vitest';
import { validateRow } from '../../src/validate/row-rules.js';
import type { RowCorridor } from '../helpers/rows.js';
import { RULES, validRow } from '../helpers/rows.js';

const codes = (corridor: RowCorridor, overrides: Record<string, string | undefined>, rules = RULES) =>
  validateRow(validRow(corridor, overrides), rules).errors.map((e) => `${e.field}:${e.code}`);
const warnings = (corridor: RowCorridor, overrides: Record<string, string | undefined>) =>
  validateRow(validRow(corridor, overrides), RULES).warnings.map((e) => `${e.field}:${e.code}`);

describe('row rules: a valid row of each corridor', () => {
  it.each(['gbr', 'eur', 'global', 'ngaBank', 'ngaCash'] as RowCorridor[])('%s passes with its corridor', (corridor) => {
    const verdict = validateRow(validRow(corridor), RULES);
    expect(verdict.errors).toEqual([]);
    expect(verdict.corridor?.id).toBe({ gbr: 'gbr-bank', eur: 'eur-iban-bank', global: 'global-usd-bank', ngaBank: 'nga-bank', ngaCash: 'nga-cash' }[corridor]);
    expect(verdict.amountMinor).toBe(10000n);
  });

  it('normalises what people type: IBAN spaces, sort code dashes, lower-case codes, phone spacing', () => {
    const verdict = validateRow(validRow('gbr', { recipient_sort_code: '08-99-99', input_currency_code: 'usd', type: 'BANK', recipient_phone_number: '+44 7400 123-457' }), RULES);
    expect(verdict.errors).toEqual([]);
    expect(verdict.values).toMatchObject({ recipient_sort_code: '089999', input_currency_code: 'USD', type: 'bank', recipient_phone_number: '+447400123457' });
    const iban = validateRow(validRow('eur', { recipient_iban: 'de89 3704 0044 0532 0130 00' }), RULES);
    expect(iban.errors).toEqual([]);
    expect(iban.values.recipient_iban).toBe('DE89370400440532013000');
  });
});

describe('row rules: corridor', () => {
  it('names the corridors that exist when a row has none', () => {
    const verdict = validateRow(validRow('gbr', { type: 'cash' }), RULES);
    expect(verdict.errors).toHaveLength(1);
    expect(verdict.errors[0]).toMatchObject({ field: 'recipient_country_code', code: 'no_corridor' });
    expect(verdict.errors[0]?.message).toMatch(/no corridor pays cash to GBR from USD to GBP; the corridors are: gbr-bank \(GBR, bank, USD to GBP\); eur-iban-bank \(AUT, BEL, CYP and 21 more, bank, EUR to EUR\); global-usd-bank \(any country/);
    expect(codes('eur', { input_currency_code: 'USD' })).toEqual(['recipient_country_code:no_corridor']);
  });

  it('requires each corridor\'s recipient fields', () => {
    expect(codes('gbr', { recipient_sort_code: undefined, recipient_city: undefined })).toEqual(['recipient_sort_code:required_for_corridor', 'recipient_city:required_for_corridor']);
    expect(codes('eur', { recipient_iban: undefined })).toEqual(['recipient_iban:required_for_corridor']);
    expect(codes('global', { recipient_bic: undefined, recipient_bank_account_type: undefined })).toEqual(['recipient_bic:required_for_corridor', 'recipient_bank_account_type:required_for_corridor']);
    expect(codes('ngaBank', { recipient_bank_name: undefined, recipient_bank_code: undefined })).toEqual(['recipient_bank_name:required_for_corridor', 'recipient_bank_code:required_for_corridor']);
    expect(codes('ngaCash', { recipient_phone_number: undefined })).toEqual(['recipient_phone_number:required']);
  });

  it('GBR: 6-digit sort code, 8-digit account, the pair passing the modulus check, account type', () => {
    expect(codes('gbr', { recipient_sort_code: '08999' })).toEqual(['recipient_sort_code:sort_code_invalid']);
    expect(codes('gbr', { recipient_bank_account: '6637495' })).toEqual(['recipient_bank_account:bank_account_invalid']);
    expect(codes('gbr', { recipient_bank_account: '66374959' })).toEqual(['recipient_bank_account:uk_modulus_check_failed']);
    expect(codes('gbr', { recipient_sort_code: '107999', recipient_bank_account: '88837491' })).toEqual([]);
    expect(codes('gbr', { recipient_bank_account_type: 'cheque' })).toEqual(['recipient_bank_account_type:invalid_value']);
  });

  it('euro area: a valid IBAN of the recipient\'s own country', () => {
    expect(codes('eur', { recipient_iban: 'DE89370400440532013001' })).toEqual(['recipient_iban:iban_invalid_checksum']);
    expect(codes('eur', { recipient_iban: 'DE8937040044053201300' })).toEqual(['recipient_iban:iban_invalid_length']);
    expect(codes('eur', { recipient_iban: 'FR1420041010050500013M02606' })).toEqual(['recipient_iban:iban_wrong_country']);
    expect(codes('eur', { recipient_iban: 'FR1420041010050500013M02606', recipient_country_code: 'FRA', recipient_phone_number: '+33612345678' })).toEqual([]);
  });

  it.each([
    ['MCO', 'MC5811222000010123456789030', '+377612345678'],
    ['SMR', 'SM86U0322509800000000270100', '+37866661212'],
    ['AND', 'AD1200012030200359100100', '+376312345'],
    ['VAT', 'VA59001123000012345678', '+390669812345'],
  ])('SEPA countries using the euro outside the euro area: %s is paid by IBAN in EUR', (country, iban, phone) => {
    const verdict = validateRow(validRow('eur', { recipient_country_code: country, recipient_iban: iban, recipient_phone_number: phone }), RULES);
    expect(verdict.errors).toEqual([]);
    expect(verdict.corridor?.id).toBe('eur-iban-bank');
    expect(codes('eur', { recipient_country_code: country, recipient_iban: 'DE89370400440532013000', recipient_phone_number: phone })).toEqual(['recipient_iban:iban_wrong_country']);
  });

  it('global: a valid BIC and account; a BIC of another country is a warning', () => {
    expect(codes('global', { recipient_bic: 'CHASUS3' })).toEqual(['recipient_bic:bic_invalid']);
    expect(codes('global', { recipient_bank_account: '12-34' })).toEqual(['recipient_bank_account:bank_account_invalid']);
    expect(warnings('global', { recipient_bic: 'DEUTDEFF' })).toEqual(['recipient_bic:bic_country_differs']);
  });

  it('NGA bank: a 10-digit NUBAN whose check digit matches the bank code', () => {
    expect(codes('ngaBank', { recipient_bank_account: '0000014578' })).toEqual(['recipient_bank_account:nuban_check_digit']);
    expect(codes('ngaBank', { recipient_bank_account: '000001457' })).toEqual(['recipient_bank_account:nuban_invalid_length']);
    expect(codes('ngaBank', { recipient_bank_code: '11' })).toEqual(['recipient_bank_code:bank_code_invalid']);
    expect(codes('ngaBank', { output_currency_code: 'USD' })).toEqual([]);
  });

  it('NGA cash: a valid Nigerian mobile number (the pickup code goes by SMS)', () => {
    expect(codes('ngaCash', { recipient_phone_number: '+2342012345678' })).toEqual(['recipient_phone_number:phone_not_mobile']); // a Lagos fixed line
    expect(codes('ngaBank', { recipient_phone_number: '+2342012345678' })).toEqual([]); // fine for a bank payout
    expect(codes('ngaCash', { recipient_phone_number: '+447400123457' })).toEqual(['recipient_phone_number:phone_wrong_country']);
    expect(codes('ngaCash', { recipient_phone_number: '+23418000000' })).toEqual(['recipient_phone_number:phone_invalid']);
    expect(codes('ngaCash', { recipient_phone_number: '+2349012345678' })).toEqual([]);
  });
});

describe('row rules: sender [2.2]', () => {
  it('requires its fields', () => {
    const fields = ['sender_external_id', 'sender_type', 'sender_first_name', 'sender_last_name', 'sender_birth_date', 'sender_country_code', 'sender_phone_number'];
    const missing = Object.fromEntries(fields.map((f) => [f, undefined]));
    expect(codes('gbr', missing)).toEqual(fields.map((f) => `${f}:required`));
  });

  it('takes type, gender and identification type from their lists', () => {
    expect(codes('gbr', { sender_type: 'company' })).toEqual(['sender_type:invalid_value']);
    expect(codes('gbr', { sender_gender: 'x' })).toEqual(['sender_gender:invalid_value']);
    expect(codes('gbr', { sender_identification_type: 'id_card', sender_identification_number: 'A1' })).toEqual(['sender_identification_type:invalid_value']);
    expect(codes('gbr', { sender_identification_type: 'passport' })).toEqual(['sender_identification_number:required']);
    expect(codes('gbr', { sender_identification_type: 'passport', sender_identification_number: '123456789', sender_gender: 'female' })).toEqual([]);
  });

  it('wants real dates YYYY-MM-DD, the birth date in the past; an expired ID is a warning', () => {
    expect(codes('gbr', { sender_birth_date: '2023-02-29' })).toEqual(['sender_birth_date:invalid_date']);
    expect(codes('gbr', { sender_birth_date: '2024-02-29' })).toEqual([]);
    expect(codes('gbr', { sender_birth_date: '10/12/1985' })).toEqual(['sender_birth_date:invalid_date']);
    expect(codes('gbr', { sender_birth_date: '2026-11-21' })).toEqual(['sender_birth_date:date_not_in_past']);
    expect(codes('gbr', { sender_identification_expiry: '2026-13-01' })).toEqual(['sender_identification_expiry:invalid_date']);
    expect(warnings('gbr', { sender_identification_expiry: '2020-01-01' })).toEqual(['sender_identification_expiry:identification_expired']);
  });

  it('wants an E.164 phone that is a real number, a real alpha-3 country, a well-formed email and IP', () => {
    expect(codes('gbr', { sender_phone_number: '07400123456' })).toEqual(['sender_phone_number:phone_not_e164']);
    expect(codes('gbr', { sender_phone_number: '+447700900123' })).toEqual(['sender_phone_number:phone_invalid']);
    expect(codes('gbr', { sender_country_code: 'GB' })).toEqual(['sender_country_code:invalid_country']);
    expect(codes('gbr', { sender_country_code: 'XXX' })).toEqual(['sender_country_code:invalid_country']);
    expect(codes('gbr', { sender_email: 'ada@' })).toEqual(['sender_email:invalid_email']);
    expect(codes('gbr', { sender_email: 'ada@example.com', sender_ip: '2001:db8::1' })).toEqual([]);
    expect(codes('gbr', { sender_ip: '256.0.0.1' })).toEqual(['sender_ip:invalid_ip']);
  });
});

describe('row rules: recipient [2.3]', () => {
  it('requires names and country', () => {
    expect(codes('gbr', { recipient_first_name: undefined, recipient_last_name: undefined })).toEqual(['recipient_first_name:required', 'recipient_last_name:required']);
  });

  it('requires a phone valid for the recipient\'s country for a person; a business may leave it out', () => {
    expect(codes('gbr', { recipient_phone_number: undefined })).toEqual(['recipient_phone_number:required']);
    expect(codes('gbr', { recipient_phone_number: undefined, recipient_type: 'business' })).toEqual([]);
    expect(codes('gbr', { recipient_phone_number: '+4915123456789' })).toEqual(['recipient_phone_number:phone_wrong_country']);
    expect(codes('gbr', { recipient_phone_number: '+44123' })).toEqual(['recipient_phone_number:phone_not_e164']);
  });
});

describe('row rules: money', () => {
  it('wants ISO 4217 codes and exactly one amount column', () => {
    expect(codes('gbr', { input_currency_code: 'DOL' })).toEqual(['input_currency_code:invalid_currency']);
    expect(codes('gbr', { output_amount: undefined })).toEqual(['output_amount:required']);
    expect(codes('gbr', { output_amount_in_cents: '100' })).toEqual(['output_amount:amount_ambiguous']);
    const inCents = validateRow(validRow('gbr', { output_amount: undefined, output_amount_in_cents: '12345' }), RULES);
    expect(inCents.errors).toEqual([]);
    expect(inCents.amountMinor).toBe(12345n);
  });

  it('wants a positive, exact amount with no more decimals than the currency has', () => {
    expect(codes('gbr', { output_amount: '12.345' })).toEqual(['output_amount:amount_too_precise']);
    expect(codes('gbr', { output_amount: '0' })).toEqual(['output_amount:amount_not_positive']);
    expect(codes('gbr', { output_amount: '-5' })).toEqual(['output_amount:amount_not_positive']);
    expect(codes('gbr', { output_amount: 'ten' })).toEqual(['output_amount:amount_invalid']);
  });

  it('applies the configured maximum per row per currency', () => {
    const rules = { ...RULES, maxRowAmount: { GBP: 5000000n } };
    expect(codes('gbr', { output_amount: '50000.00' }, rules)).toEqual([]);
    expect(codes('gbr', { output_amount: '50000.01' }, rules)).toEqual(['output_amount:amount_over_limit']);
    expect(validateRow(validRow('gbr', { output_amount: '50000.01' }), rules).errors[0]?.message).toMatch(/50000\.00 GBP/);
  });

  it('collects every error of a row, not just the first', () => {
    const all = codes('eur', { external_id: undefined, sender_birth_date: 'soon', recipient_iban: 'DE00', output_amount: '1.234', sender_email: 'x' });
    expect(all).toEqual(expect.arrayContaining(['external_id:required', 'sender_birth_date:invalid_date', 'recipient_iban:iban_invalid_length', 'output_amount:amount_too_precise', 'sender_email:invalid_email']));
  });
});

describe('row rules: sender verdicts remembered across rows', () => {
  it('gives a repeated sender the same verdict, re-checks a changed one, and re-checks dates on another day', () => {
    const bad = { sender_external_id: 'MEMO', sender_phone_number: '+447700900123' };
    const good = { sender_external_id: 'MEMO', sender_phone_number: '+447400123456' };
    expect(codes('gbr', bad)).toEqual(['sender_phone_number:phone_invalid']);
    expect(codes('gbr', good)).toEqual([]);
    expect(codes('gbr', bad)).toEqual(['sender_phone_number:phone_invalid']);
    const born = { sender_external_id: 'MEMO-DAY', sender_birth_date: '2026-11-22' };
    expect(codes('gbr', born)).toEqual(['sender_birth_date:date_not_in_past']);
    expect(codes('gbr', born, { ...RULES, today: '2026-11-23' })).toEqual([]);
    expect(codes('gbr', born)).toEqual(['sender_birth_date:date_not_in_past']);
  });
});
