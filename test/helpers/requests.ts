/** Valid create-transaction bodies [2.1] for each corridor of [2.4], to vary per test. */
let counter = 0;
export const nextId = (prefix = 'T'): string => `${prefix}-${process.pid}-${++counter}`;

export const sender = (overrides: Record<string, string> = {}): Record<string, string> => ({
  external_id: 'S-ADA',
  type: 'person',
  first_name: 'Ada',
  last_name: 'Lovelace',
  birth_date: '1985-12-10',
  country_code: 'GBR',
  phone_number: '+447700900123',
  ...overrides,
});

const recipients = {
  gbr: { type: 'bank', input: 'USD', output: 'GBP', recipient: { first_name: 'Alan', last_name: 'Turing', country_code: 'GBR', phone_number: '+447700900456', city: 'London', street: '1 Bletchley Road', postal_code: 'MK3 6EB', sort_code: '089999', bank_account: '66374958', bank_account_type: 'current' } },
  deu: { type: 'bank', input: 'EUR', output: 'EUR', recipient: { first_name: 'Emmy', last_name: 'Noether', country_code: 'DEU', phone_number: '+4915123456789', city: 'Berlin', street: 'Unter den Linden 1', postal_code: '10117', iban: 'DE89370400440532013000' } },
  global: { type: 'bank', input: 'USD', output: 'USD', recipient: { first_name: 'Grace', last_name: 'Hopper', country_code: 'USA', phone_number: '+12025550123', city: 'Arlington', street: '1 Navy Way', postal_code: '22202', bic: 'CHASUS33', bank_account: '123456789', bank_account_type: 'savings' } },
  ngaBank: { type: 'bank', input: 'USD', output: 'NGN', recipient: { first_name: 'Chinua', last_name: 'Achebe', country_code: 'NGA', phone_number: '+2348031234567', bank_name: 'Guaranty Trust Bank', bank_code: '058', bank_account: '0123456789', bank_account_type: 'savings' } },
  ngaCash: { type: 'cash', input: 'USD', output: 'NGN', recipient: { first_name: 'Wole', last_name: 'Soyinka', country_code: 'NGA', phone_number: '+2348031234567' } },
} as const;

export type CorridorName = keyof typeof recipients;

export function createBody(
  corridor: CorridorName = 'gbr',
  overrides: { recipient?: Record<string, string>; sender?: Record<string, string>; [field: string]: unknown } = {},
): Record<string, unknown> {
  const base = recipients[corridor];
  const { recipient, sender: senderOverrides, ...rest } = overrides;
  return {
    external_id: nextId(),
    type: base.type,
    input_currency_code: base.input,
    output_currency_code: base.output,
    output_amount_in_cents: '10000',
    sender: sender(senderOverrides),
    recipient: { ...base.recipient, ...recipient },
    ...rest,
  };
}

/** The same corridor's recipient, with the last two digits of the deciding identifier replaced. */
export function withOutcome(corridor: CorridorName, suffix: string): { recipient: Record<string, string> } {
  const base = recipients[corridor].recipient as Record<string, string>;
  const field = corridor === 'ngaCash' ? 'phone_number' : corridor === 'deu' ? 'iban' : 'bank_account';
  const value = base[field] as string;
  if (field === 'iban') return { recipient: { iban: ibanWithCheckDigits(value.slice(0, 2), value.slice(4, -2) + suffix) } };
  return { recipient: { [field]: value.slice(0, -2) + suffix } };
}

/** ISO 13616 check digits: 98 minus (BBAN + country + "00") mod 97. */
export function ibanWithCheckDigits(country: string, bban: string): string {
  const numeric = (bban + country + '00').replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  let remainder = 0;
  for (const digit of numeric) remainder = (remainder * 10 + Number(digit)) % 97;
  return `${country}${String(98 - remainder).padStart(2, '0')}${bban}`;
}
