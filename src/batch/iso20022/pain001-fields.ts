/**
 * One pain.001 credit transfer as a batch row: which element of the file each
 * batch column comes from, and the rules of the mapping (docs/iso20022.md has
 * the table). Pure: the elements' text in (paths relative to the transaction,
 * its PmtInf and the group header), the row's fields and what cannot be mapped
 * out.
 */
import countries from 'i18n-iso-countries';
import type { Field, RowFields } from '../../validate/fields.js';
import type { FieldIssue } from '../../validate/issue.js';
import { fieldIssue } from '../../validate/issue.js';
import { currencyDecimals } from '../../validate/money.js';
import { DECIMAL_SCALE, formatDecimal, isDigit, parseDecimal } from './decimal.js';

/** An element's text by its path below the block it is in (`Cdtr/PstlAdr/Ctry`; an attribute as `Amt/InstdAmt@Ccy`). */
export type Elements = ReadonlyMap<string, string>;

/** The sender fields a pain.001 does not carry, per debtor (iso20022.senders), by the debtor's name or identification. */
export type SenderDefaults = Readonly<Record<string, Readonly<Partial<Record<Field, string>>>>>;

export interface MappingOptions {
  senders: SenderDefaults;
  /** The input currency when DbtrAcct/Ccy does not say (iso20022.input_currency). */
  inputCurrency?: string;
  /** EqvtAmt (an amount given in the debtor's currency) is refused unless allowed (iso20022.allow_equivalent_amount). */
  allowEquivalentAmount: boolean;
}

/** Where a batch column comes from in the file, for messages: `CdtrAcct/Id/IBAN`. */
export const SOURCES: Partial<Record<Field, string>> = {
  external_id: 'PmtId/EndToEndId',
  type: 'CdtrAcct',
  input_currency_code: 'DbtrAcct/Ccy',
  output_currency_code: 'Amt/InstdAmt@Ccy',
  output_amount: 'Amt/InstdAmt',
  output_amount_in_cents: 'Amt/InstdAmt',
  sender_external_id: 'Dbtr',
  sender_type: 'Dbtr',
  sender_first_name: 'Dbtr/Nm',
  sender_last_name: 'Dbtr/Nm',
  sender_birth_date: 'Dbtr',
  sender_country_code: 'Dbtr/PstlAdr/Ctry',
  sender_city: 'Dbtr/PstlAdr/TwnNm',
  sender_street: 'Dbtr/PstlAdr/StrtNm',
  sender_postal_code: 'Dbtr/PstlAdr/PstCd',
  sender_phone_number: 'Dbtr',
  recipient_type: 'Cdtr/Id',
  recipient_first_name: 'Cdtr/Nm',
  recipient_last_name: 'Cdtr/Nm',
  recipient_country_code: 'Cdtr/PstlAdr/Ctry',
  recipient_city: 'Cdtr/PstlAdr/TwnNm',
  recipient_street: 'Cdtr/PstlAdr/StrtNm',
  recipient_postal_code: 'Cdtr/PstlAdr/PstCd',
  recipient_phone_number: 'Cdtr/CtctDtls/MobNb',
  recipient_email: 'Cdtr/CtctDtls/EmailAdr',
  recipient_bank_name: 'CdtrAgt/FinInstnId/Nm',
  recipient_bank_code: 'CdtrAgt/FinInstnId/ClrSysMmbId/MmbId',
  recipient_bank_account: 'CdtrAcct/Id/Othr/Id',
  recipient_bank_account_type: 'CdtrAcct/Tp/Cd',
  recipient_sort_code: 'CdtrAgt/FinInstnId/ClrSysMmbId/MmbId',
  recipient_iban: 'CdtrAcct/Id/IBAN',
  recipient_bic: 'CdtrAgt/FinInstnId/BICFI',
};

/** The clearing system of UK sort codes (ISO external code list). */
const UK_SORT_CODES = 'GBDSC';

const ACCOUNT_TYPES: Readonly<Record<string, string>> = { CACC: 'current', SVGS: 'savings' };

/** Countries by their alpha-2 code, as looked up (at most 26 × 26 keys). */
const alpha3s = new Map<string, string | undefined>();

/** "GB" (a postal address, an IBAN, a BIC) to the batch file's "GBR"; undefined when not a country. */
function alpha3(alpha2: string | undefined): string | undefined {
  if (!alpha2 || !/^[A-Z]{2}$/.test(alpha2)) return undefined;
  if (alpha3s.has(alpha2)) return alpha3s.get(alpha2);
  const found = countries.alpha2ToAlpha3(alpha2) ?? undefined;
  alpha3s.set(alpha2, found);
  return found;
}

/** A name split as the service takes it [2.3]: the last word as last_name, the rest as first_name. */
function splitName(name: string | undefined): { first?: string; last?: string } {
  const trimmed = (name ?? '').trim();
  if (trimmed === '') return {};
  // Words apart by single spaces (as names mostly are): cut at the last one.
  if (!/[^\S ]| {2}/.test(trimmed)) {
    const at = trimmed.lastIndexOf(' ');
    return at < 0 ? { first: trimmed } : { first: trimmed.slice(0, at), last: trimmed.slice(at + 1) };
  }
  const words = trimmed.split(/\s+/);
  if (words.length === 1) return { first: words[0] };
  return { first: words.slice(0, -1).join(' '), last: words.at(-1) };
}

/** The paths of a postal address's street parts (built once: they are looked up for every transfer). */
const addressKeys = (prefix: string): { street: string; building: string; line: string } => ({ street: `${prefix}/StrtNm`, building: `${prefix}/BldgNb`, line: `${prefix}/AdrLine` });
const CREDITOR_ADDRESS = addressKeys('Cdtr/PstlAdr');
const DEBTOR_ADDRESS = addressKeys('Dbtr/PstlAdr');

/** A street from structured (StrtNm and BldgNb) or unstructured (the first AdrLine) address parts. */
function street(e: Elements, keys: { street: string; building: string; line: string }): string | undefined {
  const name = e.get(keys.street);
  if (!name) return e.get(keys.line);
  const building = e.get(keys.building);
  return building ? `${building} ${name}` : name;
}

/** ISO writes a phone number with a hyphen after the country code (PhoneNumber: `+44-7400123457`); the service takes E.164. */
function e164(phone: string | undefined): string | undefined {
  // As phone.replace(/^(\+\d{1,3})-/, '$1'), without a regular expression for every transfer.
  if (phone === undefined || phone.charCodeAt(0) !== 0x2b) return phone; // '+'
  let at = 1;
  while (at < 4 && isDigit(phone.charCodeAt(at))) at += 1;
  return at > 1 && phone.charCodeAt(at) === 0x2d ? phone.slice(0, at) + phone.slice(at + 1) : phone; // '-'
}

/** The keys a debtor's sender defaults may be found under: its identifications first, then its name. */
export function debtorKeys(pmt: Elements): string[] {
  return [pmt.get('Dbtr/Id/OrgId/AnyBIC'), pmt.get('Dbtr/Id/OrgId/BICOrBEI'), pmt.get('Dbtr/Id/OrgId/LEI'), pmt.get('Dbtr/Id/OrgId/Othr/Id'), pmt.get('Dbtr/Nm')]
    .filter((key): key is string => typeof key === 'string' && key !== '');
}

/** A payment's sender, worked out once for all its transfers (while its elements stay as they are): its fields given, in row order. */
const senders = new WeakMap<Elements, { size: number; options: MappingOptions; fields: [Field, string][]; issues: FieldIssue[] }>();

function sender(pmt: Elements, options: MappingOptions, issues: FieldIssue[]): [Field, string][] {
  let known = senders.get(pmt);
  if (known?.size !== pmt.size || known.options !== options) {
    const found: FieldIssue[] = [];
    const fields = Object.entries(senderOf(pmt, options, found)).filter((entry): entry is [Field, string] => entry[1] !== undefined && entry[1] !== '');
    known = { size: pmt.size, options, fields, issues: found };
    senders.set(pmt, known);
  }
  for (const issue of known.issues) issues.push(issue);
  return known.fields;
}

function senderOf(pmt: Elements, options: MappingOptions, issues: FieldIssue[]): RowFields {
  const keys = debtorKeys(pmt);
  const key = keys.find((k) => options.senders[k] !== undefined);
  const name = splitName(pmt.get('Dbtr/Nm'));
  const fromFile: RowFields = {
    sender_type: 'business',
    sender_first_name: name.first,
    sender_last_name: name.last,
    sender_country_code: alpha3(pmt.get('Dbtr/PstlAdr/Ctry')),
    sender_city: pmt.get('Dbtr/PstlAdr/TwnNm') ?? pmt.get('Dbtr/PstlAdr/AdrLine#2'),
    sender_street: street(pmt, DEBTOR_ADDRESS),
    sender_postal_code: pmt.get('Dbtr/PstlAdr/PstCd'),
  };
  if (key === undefined) {
    issues.push(fieldIssue('sender_external_id', 'sender_not_configured', `the debtor ${keys.length ? keys.map((k) => `"${k}"`).join(' / ') : '(no name or identification)'} has no entry in iso20022.senders: a payout needs the sender's external id, date of birth (or of incorporation) and phone number, which a pain.001 does not carry`));
    return fromFile;
  }
  // What the configuration gives wins: it is the business's own word for its sender record.
  const configured = options.senders[key] as Partial<Record<Field, string>>;
  return { ...fromFile, ...Object.fromEntries(Object.entries(configured).filter(([field]) => field.startsWith('sender_'))) };
}

/** Sets a field the file gives: absent and empty are one thing in a row (RowFields), so neither gets a key. */
function put(fields: RowFields, field: Field, value: string | undefined): void {
  if (value !== undefined && value !== '') fields[field] = value;
}

/**
 * The amount exactly as the control sums count it (decimal.ts): minor units of its
 * currency, so that no other reading of the text (a decimal comma configured for
 * CSV files, leading zeros, more digits) can pay what CtrlSum did not add up.
 */
function exactAmount(fields: RowFields, text: string, currency: string | undefined, issues: FieldIssue[]): void {
  const value = parseDecimal(text);
  if (value === null) {
    issues.push(fieldIssue('output_amount', 'amount_invalid', `"${text}" is not an ISO 20022 amount (digits, a point, at most 17 decimals)`));
    return;
  }
  const decimals = currency === undefined ? undefined : currencyDecimals(currency);
  // An unknown currency is refused by the row rules, which name it.
  if (decimals === undefined) {
    fields.output_amount = formatDecimal(value);
    return;
  }
  const unit = 10n ** BigInt(DECIMAL_SCALE - decimals);
  if (value % unit !== 0n) {
    issues.push(fieldIssue('output_amount', 'amount_too_precise', `${text} has more decimal places than ${currency}'s ${decimals}`));
    return;
  }
  fields.output_amount_in_cents = (value / unit).toString();
}

/** The amount, its currency and (for EqvtAmt) the input currency, which then replaces the payment's. */
function amount(fields: RowFields, tx: Elements, options: MappingOptions, inputCurrency: string | undefined, issues: FieldIssue[]): void {
  const instructed = tx.get('Amt/InstdAmt');
  const equivalent = instructed === undefined ? tx.get('Amt/EqvtAmt/Amt') : undefined;
  const equivalentRefused = equivalent !== undefined && !options.allowEquivalentAmount;
  // The input currency keeps its place in the row before the amount (as the file's columns are ordered).
  put(fields, 'input_currency_code', equivalent !== undefined && !equivalentRefused ? tx.get('Amt/EqvtAmt/Amt@Ccy') : inputCurrency);
  if (instructed !== undefined) {
    const currency = tx.get('Amt/InstdAmt@Ccy');
    exactAmount(fields, instructed, currency, issues);
    put(fields, 'output_currency_code', currency);
  } else if (equivalentRefused) {
    issues.push(fieldIssue('output_amount', 'equivalent_amount_refused', 'Amt/EqvtAmt gives the amount in the debtor\'s currency, leaving what the creditor receives to a rate: refused (give Amt/InstdAmt, or allow it with iso20022.allow_equivalent_amount)'));
  } else if (equivalent !== undefined) {
    const currency = tx.get('Amt/EqvtAmt/CcyOfTrf');
    exactAmount(fields, equivalent, currency, issues);
    put(fields, 'output_currency_code', currency);
  }
}

function account(fields: RowFields, tx: Elements): void {
  const clearing = tx.get('CdtrAgt/FinInstnId/ClrSysMmbId/ClrSysId/Cd');
  const member = tx.get('CdtrAgt/FinInstnId/ClrSysMmbId/MmbId');
  const accountType = tx.get('CdtrAcct/Tp/Cd');
  let given: string | undefined;
  given = tx.get('CdtrAcct/Id/IBAN');
  if (given) fields.recipient_iban = given;
  given = tx.get('CdtrAcct/Id/Othr/Id');
  if (given) fields.recipient_bank_account = given;
  // Corridors that need an account type get "current" when the file does not say (CACC is the usual account).
  given = accountType === undefined ? 'current' : (ACCOUNT_TYPES[accountType] ?? accountType);
  if (given) fields.recipient_bank_account_type = given;
  given = tx.get('CdtrAgt/FinInstnId/BICFI') ?? tx.get('CdtrAgt/FinInstnId/BIC');
  if (given) fields.recipient_bic = given;
  given = tx.get('CdtrAgt/FinInstnId/Nm');
  if (given) fields.recipient_bank_name = given;
  if (member !== undefined) put(fields, clearing === UK_SORT_CODES ? 'recipient_sort_code' : 'recipient_bank_code', member);
}

/** The recipient's country: its postal address, else the country of its IBAN or of its bank's BIC. */
function recipientCountry(tx: Elements): string | undefined {
  const bic = tx.get('CdtrAgt/FinInstnId/BICFI') ?? tx.get('CdtrAgt/FinInstnId/BIC');
  return alpha3(tx.get('Cdtr/PstlAdr/Ctry')) ?? alpha3(tx.get('CdtrAcct/Id/IBAN')?.slice(0, 2)) ?? alpha3(bic?.slice(4, 6));
}

/** The row of one credit transfer, and what could not be mapped (each an error of the row). */
export function mapTransaction(tx: Elements, pmt: Elements, options: MappingOptions): { fields: RowFields; issues: FieldIssue[] } {
  const issues: FieldIssue[] = [];
  // Built key by key, in the row's order, each only when given (an object with no key deleted from it reads fast, and the row rules read it
  // often), by name where the key is fixed (a store by a named key is cheaper than put's by a key in a variable).
  const fields: RowFields = {};
  let given: string | undefined;
  const endToEnd = tx.get('PmtId/EndToEndId');
  if (endToEnd === 'NOTPROVIDED') issues.push(fieldIssue('external_id', 'end_to_end_id_not_provided', 'PmtId/EndToEndId is NOTPROVIDED, the ISO placeholder: each transfer needs its own reference, which becomes its external_id (paid exactly once by it)'));
  else put(fields, 'external_id', endToEnd);
  const name = splitName(tx.get('Cdtr/Nm'));
  const hasAccount = tx.get('CdtrAcct/Id/IBAN') !== undefined || tx.get('CdtrAcct/Id/Othr/Id') !== undefined;
  const phone = e164(tx.get('Cdtr/CtctDtls/MobNb'));
  const business = tx.get('Cdtr/Id/OrgId/AnyBIC') ?? tx.get('Cdtr/Id/OrgId/BICOrBEI') ?? tx.get('Cdtr/Id/OrgId/LEI') ?? tx.get('Cdtr/Id/OrgId/Othr/Id');
  // No account but a mobile number: a cash pickup (or mobile money) paid to that phone.
  fields.type = !hasAccount && phone !== undefined ? 'cash' : 'bank';
  amount(fields, tx, options, pmt.get('DbtrAcct/Ccy') ?? options.inputCurrency, issues);
  for (const [field, value] of sender(pmt, options, issues)) fields[field] = value;
  fields.recipient_type = business === undefined ? 'person' : 'business';
  given = name.first;
  if (given) fields.recipient_first_name = given;
  given = name.last;
  if (given) fields.recipient_last_name = given;
  given = recipientCountry(tx);
  if (given) fields.recipient_country_code = given;
  given = tx.get('Cdtr/PstlAdr/TwnNm') ?? tx.get('Cdtr/PstlAdr/AdrLine#2');
  if (given) fields.recipient_city = given;
  given = street(tx, CREDITOR_ADDRESS);
  if (given) fields.recipient_street = given;
  given = tx.get('Cdtr/PstlAdr/PstCd');
  if (given) fields.recipient_postal_code = given;
  given = phone;
  if (given) fields.recipient_phone_number = given;
  given = tx.get('Cdtr/CtctDtls/EmailAdr');
  if (given) fields.recipient_email = given;
  if (hasAccount) account(fields, tx);
  if (fields.input_currency_code === undefined) issues.push(fieldIssue('input_currency_code', 'input_currency_missing', 'the currency the payouts are funded in: DbtrAcct/Ccy is not given, nor iso20022.input_currency'));
  return { fields, issues };
}
