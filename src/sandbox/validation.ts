/**
 * The sandbox validates a create request as the service would [2.1]-[2.4], [7],
 * independently of paybatch's own validators: it must catch what a client lets
 * through. Every error is collected, keyed by field, per D5.
 */
import { isIP } from 'node:net';
import countries from 'i18n-iso-countries';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { CorridorConfig } from './config.js';
import type { Details } from './model.js';
import { currencyDecimals } from './money.js';

export type FieldErrors = Record<string, string[]>;

export interface CreateRequest {
  external_id: string;
  type: 'bank' | 'cash';
  input_currency_code: string;
  output_currency_code: string;
  output_amount_in_cents: string;
  sender: Details;
  recipient: Details;
}

export interface CorridorLookup {
  /** Corridors serving a country, active or not. */
  forCountry(country: string): (CorridorConfig & { active: boolean })[];
  hasRate(input: string, output: string): boolean;
}

const SENDER_FIELDS = [
  'type', 'first_name', 'last_name', 'birth_date', 'gender', 'identification_type', 'identification_number',
  'identification_expiry', 'country_code', 'city', 'street', 'postal_code', 'phone_number', 'email', 'ip', 'external_id',
];
const RECIPIENT_FIELDS = [
  'type', 'first_name', 'last_name', 'birth_date', 'gender', 'country_code', 'city', 'street', 'postal_code',
  'phone_number', 'email', 'bank_name', 'bank_code', 'bank_account', 'bank_account_type', 'sort_code', 'iban', 'bic',
];

const E164 = /^\+[1-9]\d{6,14}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const BIC = /^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}(?:[A-Z0-9]{3})?$/;

export const isAlpha3Country = (code: string): boolean => /^[A-Z]{3}$/.test(code) && countries.alpha3ToAlpha2(code) !== undefined;

function isRealDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text);
}

/** ISO 13616: move the first four characters to the end, letters to numbers, mod 97 must be 1. */
export function ibanChecksumValid(iban: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const value = /[A-Z]/.test(char) ? String(char.charCodeAt(0) - 55) : char;
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}

class Collector {
  readonly errors: FieldErrors = {};
  add(field: string, message: string): void {
    (this.errors[field] ??= []).push(message);
  }
}

/** Keeps the known fields that are strings; anything else of a known field is an error. */
function pickDetails(value: unknown, prefix: string, fields: readonly string[], out: Collector): Details {
  const details: Details = {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    out.add(prefix, 'is required and must be an object');
    return details;
  }
  for (const field of fields) {
    const v = (value as Record<string, unknown>)[field];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') out.add(`${prefix}.${field}`, 'must be a string');
    else if (v.trim() !== '') details[field] = v.trim();
  }
  return details;
}

function checkCommon(d: Details, prefix: string, out: Collector, today: string): void {
  const oneOf = (field: string, values: readonly string[]): void => {
    if (d[field] !== undefined && !values.includes(d[field])) out.add(`${prefix}.${field}`, `must be one of ${values.join(', ')}`);
  };
  oneOf('type', ['person', 'business']);
  oneOf('gender', ['male', 'female']);
  for (const field of ['first_name', 'last_name', 'country_code']) {
    if (d[field] === undefined) out.add(`${prefix}.${field}`, 'is required');
  }
  if (d.country_code !== undefined && !isAlpha3Country(d.country_code)) out.add(`${prefix}.country_code`, 'must be an ISO 3166-1 alpha-3 code');
  if (d.birth_date !== undefined) {
    if (!isRealDate(d.birth_date)) out.add(`${prefix}.birth_date`, 'must be a date YYYY-MM-DD');
    else if (d.birth_date >= today) out.add(`${prefix}.birth_date`, 'must be in the past');
  }
  if (d.email !== undefined && !EMAIL.test(d.email)) out.add(`${prefix}.email`, 'is not a valid email address');
}

function checkSender(s: Details, out: Collector, today: string): void {
  checkCommon(s, 'sender', out, today);
  for (const field of ['type', 'birth_date', 'phone_number', 'external_id']) {
    if (s[field] === undefined) out.add(`sender.${field}`, 'is required');
  }
  if (s.identification_type !== undefined) {
    if (!['driving_license', 'passport', 'other'].includes(s.identification_type)) {
      out.add('sender.identification_type', 'must be one of driving_license, passport, other');
    }
    if (s.identification_number === undefined) out.add('sender.identification_number', 'is required when identification_type is present');
  }
  if (s.identification_expiry !== undefined && !isRealDate(s.identification_expiry)) out.add('sender.identification_expiry', 'must be a date YYYY-MM-DD');
  if (s.phone_number !== undefined && !E164.test(s.phone_number)) out.add('sender.phone_number', 'must be in E.164 format, starting with +');
  if (s.ip !== undefined && isIP(s.ip) === 0) out.add('sender.ip', 'is not a valid IP address');
}

function checkRecipient(r: Details, type: string, out: Collector, today: string): void {
  checkCommon(r, 'recipient', out, today);
  const isPerson = (r.type ?? 'person') === 'person';
  if (isPerson && r.phone_number === undefined) out.add('recipient.phone_number', 'is required for a person recipient');
  if (r.phone_number !== undefined) {
    if (!E164.test(r.phone_number)) out.add('recipient.phone_number', 'must be in international format, starting with +');
    else if (type === 'cash' && r.country_code !== undefined && isAlpha3Country(r.country_code)) {
      const parsed = parsePhoneNumberFromString(r.phone_number);
      const region = countries.alpha3ToAlpha2(r.country_code);
      if (!parsed || !parsed.isValid() || parsed.country !== region) {
        out.add('recipient.phone_number', `is not a valid phone number for ${r.country_code}`);
      }
    }
  }
  if (r.bank_account_type !== undefined && !['current', 'savings'].includes(r.bank_account_type)) {
    out.add('recipient.bank_account_type', 'must be one of current, savings');
  }
  if (r.iban !== undefined) {
    if (!ibanChecksumValid(r.iban)) out.add('recipient.iban', 'is invalid');
    else if (r.country_code !== undefined && countries.alpha3ToAlpha2(r.country_code) !== r.iban.slice(0, 2)) {
      out.add('recipient.iban', `is not an IBAN of ${r.country_code}`);
    }
  }
  if (r.bic !== undefined && !BIC.test(r.bic)) out.add('recipient.bic', 'is invalid');
  if (r.sort_code !== undefined && !/^\d{6}$/.test(r.sort_code)) out.add('recipient.sort_code', 'must be 6 digits');
  if (r.bank_account !== undefined && !/^\d{6,20}$/.test(r.bank_account)) out.add('recipient.bank_account', 'must be 6 to 20 digits');
}

/** [2.4], [D12] A known, active corridor for the country, type and currency pair, with its fields. */
function checkCorridor(req: CreateRequest, corridors: CorridorLookup, out: Collector): void {
  const country = req.recipient.country_code;
  if (country === undefined || !isAlpha3Country(country) || out.errors.type || out.errors.input_currency_code || out.errors.output_currency_code) return;
  const serving = corridors.forCountry(country).filter((c) => c.type === req.type);
  const pair = `${req.input_currency_code} to ${req.output_currency_code}`;
  const candidates = serving.filter((c) => c.input_currency_codes.includes(req.input_currency_code) && c.output_currency_codes.includes(req.output_currency_code));
  // A corridor that names the country wins over one for every country.
  const corridor = candidates.find((c) => c.countries !== '*') ?? candidates[0];
  if (!corridor) {
    out.add('corridor', `no ${req.type} corridor to ${country} for ${pair}`);
    return;
  }
  if (!corridor.active) {
    out.add('corridor', `corridor ${corridor.id} is not active`);
    return;
  }
  if (!corridors.hasRate(req.input_currency_code, req.output_currency_code)) out.add('corridor', `no exchange rate for ${pair}`);
  for (const field of corridor.required_recipient_fields) {
    if (req.recipient[field] === undefined) out.add(`recipient.${field}`, `is required for corridor ${corridor.id}`);
  }
  if (corridor.id === 'gbr-bank' && req.recipient.bank_account !== undefined && !/^\d{8}$/.test(req.recipient.bank_account)) {
    out.add('recipient.bank_account', 'must be 8 digits for corridor gbr-bank');
  }
  if (corridor.id === 'nga-bank' && req.recipient.bank_account !== undefined && !/^\d{10}$/.test(req.recipient.bank_account)) {
    out.add('recipient.bank_account', 'must be a 10-digit NUBAN for corridor nga-bank');
  }
}

export function validateCreate(
  body: unknown,
  corridors: CorridorLookup,
  today: string,
): { request: CreateRequest; errors: null } | { request: null; errors: FieldErrors } {
  const out = new Collector();
  const input = (typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
  if (input !== body) out.add('base', 'the request body must be a JSON object');
  const text = (field: string): string => {
    const v = input[field];
    if (v === undefined || v === null || v === '') out.add(field, 'is required');
    else if (typeof v !== 'string') out.add(field, 'must be a string');
    else return v;
    return '';
  };
  const request: CreateRequest = {
    external_id: text('external_id'),
    type: text('type') as CreateRequest['type'],
    input_currency_code: text('input_currency_code'),
    output_currency_code: text('output_currency_code'),
    output_amount_in_cents: text('output_amount_in_cents'),
    sender: pickDetails(input.sender, 'sender', SENDER_FIELDS, out),
    recipient: pickDetails(input.recipient, 'recipient', RECIPIENT_FIELDS, out),
  };
  if (request.type && !['bank', 'cash'].includes(request.type)) out.add('type', 'must be one of bank, cash');
  for (const field of ['input_currency_code', 'output_currency_code'] as const) {
    if (request[field] && currencyDecimals(request[field]) === undefined) out.add(field, 'is not an ISO 4217 currency code');
  }
  if (request.external_id.length > 255) out.add('external_id', 'must be at most 255 characters');
  if (request.output_amount_in_cents && !/^\d{1,18}$/.test(request.output_amount_in_cents)) {
    out.add('output_amount_in_cents', 'must be an integer count of minor units, as a string');
  } else if (request.output_amount_in_cents && BigInt(request.output_amount_in_cents) === 0n) {
    out.add('output_amount_in_cents', 'must be greater than zero');
  }
  checkSender(request.sender, out, today);
  checkRecipient(request.recipient, request.type, out, today);
  checkCorridor(request, corridors, out);
  return Object.keys(out.errors).length === 0 ? { request, errors: null } : { request: null, errors: out.errors };
}
