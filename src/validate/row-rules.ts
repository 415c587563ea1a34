/**
 * The rules for one row [2.1]-[2.4]: pure, no I/O, every error collected. The
 * result carries the row's values normalised (IBAN without spaces, codes in
 * upper case, phones without separators) and its amount in minor units.
 */
import type { Corridor } from './corridors.js';
import { describeCorridors, findCorridor } from './corridors.js';
import { checkCorridorFields } from './corridor-checks.js';
import type { Field, RowFields } from './fields.js';
import { SENDER_FIELDS } from './fields.js';
import { fingerprintFields } from './row-columns.js';
import { Memo } from './memo.js';
import { alpha2Of, isEmail, isIpAddress, isRealDate, phoneFacts } from './formats.js';
import type { FieldIssue } from './issue.js';
import { Findings } from './findings.js';
import { currencyDecimals, formatMinor, parseMajorAmount, parseMinorAmount } from './money.js';
import { ibanElectronic } from './bank-accounts.js';
import { checkCorrectionId } from './correction-id.js';

export interface RowRuleOptions {
  /** Today, YYYY-MM-DD: birth dates must be before it. */
  today: string;
  decimalSeparator: '.' | ',';
  /** Largest amount a row may pay, per output currency, in minor units. */
  maxRowAmount: Readonly<Record<string, bigint>>;
  corridors?: readonly Corridor[];
}

export interface RowVerdict {
  errors: FieldIssue[];
  warnings: FieldIssue[];
  /** The row's values, normalised; meaningful when there is no error. */
  values: RowFields;
  amountMinor: bigint | null;
  corridor: Corridor | null;
  /** A fingerprint of the sender's values (53 bits), to tell a sender's details apart across rows. */
  senderFingerprint: number;
}

const ENUMS: Partial<Record<Field, readonly string[]>> = {
  type: ['bank', 'cash'],
  sender_type: ['person', 'business'],
  sender_gender: ['male', 'female'],
  sender_identification_type: ['driving_license', 'passport', 'other'],
  recipient_type: ['person', 'business'],
  recipient_gender: ['male', 'female'],
  recipient_bank_account_type: ['current', 'savings'],
};

const ENUM_FIELDS = Object.keys(ENUMS) as Field[];
const ENUM_ENTRIES = Object.entries(ENUMS) as [Field, readonly string[]][];
const SENDER_ENUMS = ENUM_ENTRIES.filter(([field]) => field.startsWith('sender_'));
const OTHER_ENUMS = ENUM_ENTRIES.filter(([field]) => !field.startsWith('sender_'));
const UPPER_CASE: readonly Field[] = ['input_currency_code', 'output_currency_code', 'sender_country_code', 'recipient_country_code', 'recipient_bic'];
const PHONES: readonly Field[] = ['sender_phone_number', 'recipient_phone_number'];

/** How people write values in spreadsheets, brought to the form the API takes. Changes `values` in place. */
export function normalise(values: RowFields): RowFields {
  for (const field of ENUM_FIELDS) {
    const value = values[field];
    if (value && /[A-Z]/.test(value)) values[field] = value.toLowerCase();
  }
  for (const field of UPPER_CASE) {
    const value = values[field];
    if (value && /[a-z\s]/.test(value)) values[field] = value.toUpperCase().replace(/\s+/g, '');
  }
  for (const field of PHONES) {
    const value = values[field];
    if (value && /[\s().-]/.test(value)) values[field] = value.replace(/[\s().-]+/g, '');
  }
  if (values.recipient_iban && /[^A-Z0-9]/.test(values.recipient_iban)) values.recipient_iban = ibanElectronic(values.recipient_iban);
  if (values.recipient_sort_code && /[\s-]/.test(values.recipient_sort_code)) values.recipient_sort_code = values.recipient_sort_code.replace(/[\s-]+/g, '');
  if (values.recipient_bank_account && /\s/.test(values.recipient_bank_account)) values.recipient_bank_account = values.recipient_bank_account.replace(/\s+/g, '');
  return values;
}

const TRANSACTION_REQUIRED: readonly Field[] = ['external_id', 'type', 'input_currency_code', 'output_currency_code'];

/**
 * Characters a reader cannot see, or that reorder what is shown: control
 * characters (not tab or line breaks), the soft hyphen, zero-width characters,
 * and bidirectional overrides and isolates ("Trojan Source"). In a name or an
 * address they can make a payout look like another in reports.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const INVISIBLE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00AD\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/;

function checkInvisible(values: RowFields, out: Findings): void {
  for (const field in values) {
    const value = values[field as Field];
    const found = value ? INVISIBLE.exec(value) : null;
    if (!found) continue;
    const code = `U+${(found[0].codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;
    out.error(field, 'invisible_character', `${field} contains an invisible or direction-changing character (${code}): it could disguise the value in results and reports; remove it`);
  }
}
const SENDER_REQUIRED: readonly Field[] = ['sender_external_id', 'sender_type', 'sender_first_name', 'sender_last_name', 'sender_birth_date', 'sender_country_code', 'sender_phone_number'];
const RECIPIENT_REQUIRED: readonly Field[] = ['recipient_first_name', 'recipient_last_name', 'recipient_country_code'];

function checkRequired(v: RowFields, fields: readonly Field[], out: Findings): void {
  for (const field of fields) if (!v[field]) out.error(field, 'required', `${field} is required`);
}

function checkDate(v: RowFields, field: 'sender_birth_date' | 'recipient_birth_date', today: string, out: Findings): void {
  const value = v[field];
  if (!value) return;
  if (!isRealDate(value)) out.error(field, 'invalid_date', `${field} must be a real date written YYYY-MM-DD`);
  else if (value >= today) out.error(field, 'date_not_in_past', `${field} must be in the past`);
}

/** [2.2] Everything about the sender; depends only on the sender's values and today. */
function checkSender(v: RowFields, today: string, out: Findings): void {
  checkRequired(v, SENDER_REQUIRED, out);
  checkEnums(v, out, SENDER_ENUMS);
  checkDate(v, 'sender_birth_date', today, out);
  const expiry = v.sender_identification_expiry;
  if (expiry && !isRealDate(expiry)) out.error('sender_identification_expiry', 'invalid_date', 'sender_identification_expiry must be a real date written YYYY-MM-DD');
  else if (expiry && expiry < today) out.warn('sender_identification_expiry', 'identification_expired', `the sender's identification expired on ${expiry}`);
  if (v.sender_country_code && !alpha2Of(v.sender_country_code)) {
    out.error('sender_country_code', 'invalid_country', 'sender_country_code must be an ISO 3166-1 alpha-3 country code, such as GBR or NGA');
  }
  if (v.sender_email && !isEmail(v.sender_email)) out.error('sender_email', 'invalid_email', 'sender_email is not a well-formed email address');
  if (v.sender_ip && !isIpAddress(v.sender_ip)) out.error('sender_ip', 'invalid_ip', 'sender_ip is not a valid IPv4 or IPv6 address');
  if (v.sender_identification_type && !v.sender_identification_number) {
    out.error('sender_identification_number', 'required', 'sender_identification_number is required when sender_identification_type is given');
  }
  const phone = v.sender_phone_number;
  if (phone) {
    const facts = phoneFacts(phone);
    if (!facts.e164) out.error('sender_phone_number', 'phone_not_e164', 'sender_phone_number must be in E.164 format: + and the country code, e.g. +447700900123');
    else if (!facts.valid) out.error('sender_phone_number', 'phone_invalid', 'sender_phone_number is not a valid phone number');
  }
}

interface SenderVerdict {
  check: number;
  errors: FieldIssue[];
  warnings: FieldIssue[];
}

/**
 * Senders repeat across a batch (often one business pays everyone), and their
 * verdict depends only on their values and today: kept by an 85-bit fingerprint
 * of those (53 bits as the key, 32 more checked on every hit).
 */
const senderVerdicts = new Memo<number, SenderVerdict>(10_000);
let senderVerdictsDay = '';

function senderVerdict(v: RowFields, today: string): { verdict: SenderVerdict; fingerprint: number } {
  if (today !== senderVerdictsDay) {
    senderVerdicts.clear();
    senderVerdictsDay = today;
  }
  const lanes = fingerprintFields(v, SENDER_FIELDS);
  const a = lanes[0] as number;
  const b = lanes[1] as number;
  const c = lanes[2] as number;
  const key = a * 0x200000 + (b & 0x1fffff);
  const known = senderVerdicts.get(key);
  if (known && known.check === c) return { verdict: known, fingerprint: key };
  const out = new Findings();
  checkSender(v, today, out);
  const verdict = { check: c, errors: out.errors, warnings: out.warnings };
  senderVerdicts.set(key, verdict);
  return { verdict, fingerprint: key };
}

function checkEnums(v: RowFields, out: Findings, entries: readonly [Field, readonly string[]][] = ENUM_ENTRIES): void {
  for (const [field, allowed] of entries) {
    const value = v[field];
    if (value && !allowed.includes(value)) out.error(field, 'invalid_value', `${field} must be one of ${allowed.join(', ')}`);
  }
}

function checkRecipientFormats(v: RowFields, today: string, out: Findings): void {
  checkDate(v, 'recipient_birth_date', today, out);
  if (v.recipient_country_code && !alpha2Of(v.recipient_country_code)) {
    out.error('recipient_country_code', 'invalid_country', 'recipient_country_code must be an ISO 3166-1 alpha-3 country code, such as GBR or NGA');
  }
  if (v.recipient_email && !isEmail(v.recipient_email)) out.error('recipient_email', 'invalid_email', 'recipient_email is not a well-formed email address');
  if (v.external_id && v.external_id.length > 255) out.error('external_id', 'too_long', 'external_id must be at most 255 characters');
}

function checkRecipientPhone(v: RowFields, out: Findings): void {
  const isPerson = (v.recipient_type ?? 'person') === 'person';
  const recipient = v.recipient_phone_number;
  if (!recipient) {
    if (isPerson) out.error('recipient_phone_number', 'required', 'recipient_phone_number is required for a person recipient');
    return;
  }
  // Recipients rarely repeat within a file: not worth a place in the phone cache.
  const facts = phoneFacts(recipient, false);
  const region = v.recipient_country_code ? alpha2Of(v.recipient_country_code) : undefined;
  if (!facts.e164) out.error('recipient_phone_number', 'phone_not_e164', 'recipient_phone_number must be in international format: + and the country code');
  else if (!facts.valid) out.error('recipient_phone_number', 'phone_invalid', 'recipient_phone_number is not a valid phone number');
  else if (region && facts.region !== region) {
    out.error('recipient_phone_number', 'phone_wrong_country', `recipient_phone_number is not a number of ${v.recipient_country_code}`);
  }
}

/** An amount written with the other decimal separator ("1234,56" where "." is expected) points to the setting that reads it. */
function separatorHint(text: string, separator: '.' | ','): string {
  if (separator === '.' && /^\d+,\d+$/.test(text)) return '; for amounts written with a decimal comma, set batch.decimal_separator to "," in the configuration';
  if (separator === ',' && /^\d+\.\d+$/.test(text)) return '; batch.decimal_separator is ","; for amounts written with a decimal point, set it to "."';
  return '';
}

function checkAmount(v: RowFields, options: RowRuleOptions, out: Findings): bigint | null {
  for (const field of ['input_currency_code', 'output_currency_code'] as const) {
    if (v[field] && currencyDecimals(v[field] as string) === undefined) out.error(field, 'invalid_currency', `${field} must be an ISO 4217 currency code, such as USD`);
  }
  if (v.output_amount && v.output_amount_in_cents) {
    out.error('output_amount', 'amount_ambiguous', 'give the amount in only one of output_amount and output_amount_in_cents');
    return null;
  }
  if (!v.output_amount && !v.output_amount_in_cents) {
    out.error('output_amount', 'required', 'the amount is required, in output_amount or output_amount_in_cents');
    return null;
  }
  const decimals = v.output_currency_code ? currencyDecimals(v.output_currency_code) : undefined;
  const field = v.output_amount ? 'output_amount' : 'output_amount_in_cents';
  if (field === 'output_amount' && decimals === undefined) return null;
  const parsed = field === 'output_amount'
    ? parseMajorAmount(v.output_amount as string, decimals as number, options.decimalSeparator)
    : parseMinorAmount(v.output_amount_in_cents as string);
  if (!parsed.ok) {
    out.error(field, parsed.code, `${field}: ${parsed.message}${field === 'output_amount' ? separatorHint(v.output_amount as string, options.decimalSeparator) : ''}`);
    return null;
  }
  const limit = v.output_currency_code ? options.maxRowAmount[v.output_currency_code] : undefined;
  if (limit !== undefined && parsed.minor > limit) {
    const shown = decimals === undefined ? limit.toString() : formatMinor(limit, decimals);
    out.error(field, 'amount_over_limit', `the amount is over the configured maximum per row of ${shown} ${v.output_currency_code}`);
  }
  return parsed.minor;
}

function resolveCorridor(v: RowFields, options: RowRuleOptions, out: Findings): Corridor | null {
  if (!v.recipient_country_code || !v.type || !v.input_currency_code || !v.output_currency_code) return null;
  if (['type', 'recipient_country_code', 'input_currency_code', 'output_currency_code'].some((f) => out.hasError(f))) return null;
  const query = { country: v.recipient_country_code, type: v.type, input: v.input_currency_code, output: v.output_currency_code };
  const corridor = findCorridor(query, options.corridors);
  if (!corridor) {
    out.error('recipient_country_code', 'no_corridor',
      `no corridor pays ${v.type} to ${query.country} from ${query.input} to ${query.output}; the corridors are: ${describeCorridors(options.corridors)}`);
    return null;
  }
  return corridor;
}

/** Validates one row. `fields` is normalised in place: the reader hands each row over for good. */
export function validateRow(fields: RowFields, options: RowRuleOptions): RowVerdict {
  const values = normalise(fields);
  const out = new Findings();
  checkInvisible(values, out);
  checkRequired(values, TRANSACTION_REQUIRED, out);
  checkCorrectionId(values, out);
  const sender = senderVerdict(values, options.today);
  out.errors.push(...sender.verdict.errors);
  out.warnings.push(...sender.verdict.warnings);
  checkRequired(values, RECIPIENT_REQUIRED, out);
  checkEnums(values, out, OTHER_ENUMS);
  checkRecipientFormats(values, options.today, out);
  checkRecipientPhone(values, out);
  const amountMinor = checkAmount(values, options, out);
  const corridor = resolveCorridor(values, options, out);
  checkCorridorFields(values, corridor, out);
  return { errors: out.errors, warnings: out.warnings, values, amountMinor, corridor, senderFingerprint: sender.fingerprint };
}

