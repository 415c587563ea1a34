/** Valid batch rows (canonical fields) per corridor, to vary one field at a time in rule tests. */
import type { RowFields } from '../../src/validate/fields.js';
import type { RowRuleOptions } from '../../src/validate/row-rules.js';

export const RULES: RowRuleOptions = { today: '2026-11-21', decimalSeparator: '.', maxRowAmount: {} };

const SENDER: RowFields = {
  sender_external_id: 'SND-1', sender_type: 'person', sender_first_name: 'Ada', sender_last_name: 'Lovelace',
  sender_birth_date: '1985-12-10', sender_country_code: 'GBR', sender_phone_number: '+447400123456',
};

const RECIPIENTS: Record<string, RowFields> = {
  gbr: { type: 'bank', input_currency_code: 'USD', output_currency_code: 'GBP', recipient_first_name: 'Alan', recipient_last_name: 'Turing', recipient_country_code: 'GBR', recipient_phone_number: '+447400123457', recipient_city: 'Wilmslow', recipient_street: '43 Adlington Road', recipient_postal_code: 'SK9 2BG', recipient_sort_code: '089999', recipient_bank_account: '66374958', recipient_bank_account_type: 'current' },
  eur: { type: 'bank', input_currency_code: 'EUR', output_currency_code: 'EUR', recipient_first_name: 'Emmy', recipient_last_name: 'Noether', recipient_country_code: 'DEU', recipient_phone_number: '+4915123456789', recipient_city: 'Berlin', recipient_street: 'Unter den Linden 6', recipient_postal_code: '10117', recipient_iban: 'DE89370400440532013000' },
  global: { type: 'bank', input_currency_code: 'USD', output_currency_code: 'USD', recipient_first_name: 'Grace', recipient_last_name: 'Hopper', recipient_country_code: 'USA', recipient_phone_number: '+12025550123', recipient_city: 'Arlington', recipient_street: '1 Navy Way', recipient_postal_code: '22202', recipient_bic: 'CHASUS33', recipient_bank_account: '123456789', recipient_bank_account_type: 'savings' },
  ngaBank: { type: 'bank', input_currency_code: 'USD', output_currency_code: 'NGN', recipient_first_name: 'Chinua', recipient_last_name: 'Achebe', recipient_country_code: 'NGA', recipient_phone_number: '+2348031234567', recipient_bank_name: 'First Bank of Nigeria', recipient_bank_code: '011', recipient_bank_account: '0000014579', recipient_bank_account_type: 'savings' },
  ngaCash: { type: 'cash', input_currency_code: 'USD', output_currency_code: 'NGN', recipient_first_name: 'Wole', recipient_last_name: 'Soyinka', recipient_country_code: 'NGA', recipient_phone_number: '+2348031234567' },
};

export type RowCorridor = keyof typeof RECIPIENTS;

export function validRow(corridor: RowCorridor = 'gbr', overrides: Record<string, string | undefined> = {}): RowFields {
  const row: Record<string, string | undefined> = { external_id: 'T-1', output_amount: '100.00', ...SENDER, ...RECIPIENTS[corridor], ...overrides };
  return Object.fromEntries(Object.entries(row).filter(([, v]) => v !== undefined && v !== '')) as RowFields;
}
