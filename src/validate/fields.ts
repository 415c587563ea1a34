/**
 * The canonical columns of a batch file: the API's field names [2.1]-[2.3],
 * prefixed `sender_` and `recipient_` for the nested objects.
 */
export const TRANSACTION_FIELDS = ['external_id', 'type', 'input_currency_code', 'output_currency_code', 'output_amount', 'output_amount_in_cents'] as const;

export const SENDER_FIELDS = [
  'sender_external_id', 'sender_type', 'sender_first_name', 'sender_last_name', 'sender_birth_date', 'sender_gender',
  'sender_identification_type', 'sender_identification_number', 'sender_identification_expiry', 'sender_country_code',
  'sender_city', 'sender_street', 'sender_postal_code', 'sender_phone_number', 'sender_email', 'sender_ip',
] as const;

export const RECIPIENT_FIELDS = [
  'recipient_type', 'recipient_first_name', 'recipient_last_name', 'recipient_birth_date', 'recipient_gender',
  'recipient_country_code', 'recipient_city', 'recipient_street', 'recipient_postal_code', 'recipient_phone_number',
  'recipient_email', 'recipient_bank_name', 'recipient_bank_code', 'recipient_bank_account', 'recipient_bank_account_type',
  'recipient_sort_code', 'recipient_iban', 'recipient_bic',
] as const;

/**
 * A corrections file's own columns (paybatch corrections): the row it pays
 * again, and, for the person fixing it, why the original was not paid and what
 * to fix. Not sent to the service.
 */
export const CORRECTION_FIELDS = ['original_batch', 'original_line', 'unpaid_state', 'unpaid_reason', 'to_fix'] as const;

export const FIELDS = [...TRANSACTION_FIELDS, ...SENDER_FIELDS, ...RECIPIENT_FIELDS, ...CORRECTION_FIELDS] as const;
export type Field = (typeof FIELDS)[number];

/** A row's values by canonical field; absent and empty cells are both absent. */
export type RowFields = Partial<Record<Field, string>>;

/** Columns every batch file must have (the amount is checked apart: one of two columns). */
export const REQUIRED_COLUMNS: readonly Field[] = [
  'external_id', 'type', 'input_currency_code', 'output_currency_code',
  'sender_external_id', 'sender_type', 'sender_first_name', 'sender_last_name', 'sender_birth_date',
  'sender_country_code', 'sender_phone_number',
  'recipient_first_name', 'recipient_last_name', 'recipient_country_code',
];

export const AMOUNT_COLUMNS: readonly Field[] = ['output_amount', 'output_amount_in_cents'];
