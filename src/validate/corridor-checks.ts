/**
 * [2.4] What each corridor needs of the recipient. The table of corridors is data
 * (config/corridors.json); the named checks it refers to are implemented here.
 * Format rules for bank fields apply whenever the field is filled in.
 */
import type { Corridor, CorridorCheck } from './corridors.js';
import type { RowFields } from './fields.js';
import type { Findings } from './findings.js';
import { alpha2Of, phoneFacts } from './formats.js';
import { checkIban, isValidBic, nubanValid, ukModulusValid } from './bank-accounts.js';

const IBAN_MESSAGES = {
  checksum: ['iban_invalid_checksum', 'recipient_iban has a wrong check digit: a typing mistake is likely'],
  length: ['iban_invalid_length', 'recipient_iban has the wrong length for its country'],
  format: ['iban_invalid_format', 'recipient_iban is not in the format of its country'],
  country_unknown: ['iban_invalid_format', 'recipient_iban does not start with a known country code'],
} as const;

function checkBankFormats(v: RowFields, out: Findings): void {
  if (v.recipient_iban) {
    const verdict = checkIban(v.recipient_iban);
    if (verdict !== 'valid') {
      const [code, message] = IBAN_MESSAGES[verdict];
      out.error('recipient_iban', code, message);
    }
  }
  if (v.recipient_sort_code && !/^\d{6}$/.test(v.recipient_sort_code)) {
    out.error('recipient_sort_code', 'sort_code_invalid', 'recipient_sort_code must be 6 digits (dashes and spaces are allowed)');
  }
  if (v.recipient_bic && !isValidBic(v.recipient_bic)) {
    out.error('recipient_bic', 'bic_invalid', 'recipient_bic is not a valid BIC (8 or 11 characters: bank, country, location, branch)');
  }
}

const CHECKS: Record<CorridorCheck, (v: RowFields, out: Findings) => void> = {
  uk_sort_code_and_account(v, out) {
    const account = v.recipient_bank_account;
    if (account && !/^\d{8}$/.test(account)) {
      out.error('recipient_bank_account', 'bank_account_invalid', 'recipient_bank_account must be 8 digits for a UK account');
    } else if (account && v.recipient_sort_code && /^\d{6}$/.test(v.recipient_sort_code) && !ukModulusValid(v.recipient_sort_code, account)) {
      out.error('recipient_bank_account', 'uk_modulus_check_failed', 'recipient_sort_code and recipient_bank_account do not pass the UK modulus check: one of them is mistyped');
    }
  },
  iban_of_recipient_country(v, out) {
    const region = v.recipient_country_code ? alpha2Of(v.recipient_country_code) : undefined;
    if (v.recipient_iban && region && !out.hasError('recipient_iban') && v.recipient_iban.slice(0, 2) !== region) {
      out.error('recipient_iban', 'iban_wrong_country', `recipient_iban is an IBAN of ${v.recipient_iban.slice(0, 2)}, not of the recipient's country ${v.recipient_country_code}`);
    }
  },
  bic(v, out) {
    if (v.recipient_bank_account && !/^[A-Za-z0-9]{4,34}$/.test(v.recipient_bank_account)) {
      out.error('recipient_bank_account', 'bank_account_invalid', 'recipient_bank_account must be 4 to 34 letters and digits');
    }
    const region = v.recipient_country_code ? alpha2Of(v.recipient_country_code) : undefined;
    if (v.recipient_bic && region && !out.hasError('recipient_bic') && v.recipient_bic.slice(4, 6) !== region) {
      out.warn('recipient_bic', 'bic_country_differs', `recipient_bic is of ${v.recipient_bic.slice(4, 6)} while the recipient's country is ${v.recipient_country_code}`);
    }
  },
  nuban(v, out) {
    const account = v.recipient_bank_account;
    const code = v.recipient_bank_code;
    if (code && !/^(\d{3}|\d{6})$/.test(code)) out.error('recipient_bank_code', 'bank_code_invalid', 'recipient_bank_code must be a 3-digit CBN bank code or a 6-digit institution code');
    if (account && !/^\d{10}$/.test(account)) out.error('recipient_bank_account', 'nuban_invalid_length', 'recipient_bank_account must be a 10-digit NUBAN');
    else if (account && code && !out.hasError('recipient_bank_code') && !nubanValid(code, account)) {
      out.error('recipient_bank_account', 'nuban_check_digit', 'recipient_bank_account does not match recipient_bank_code (NUBAN check digit): one of them is mistyped');
    }
  },
  mobile_phone_for_country(v, out) {
    const phone = v.recipient_phone_number;
    if (phone && !out.hasError('recipient_phone_number') && !phoneFacts(phone).mobile) {
      out.error('recipient_phone_number', 'phone_not_mobile', 'recipient_phone_number must be a mobile number: the pickup code is sent by SMS');
    }
  },
};

export function checkCorridorFields(v: RowFields, corridor: Corridor | null, out: Findings): void {
  checkBankFormats(v, out);
  if (!corridor) return;
  for (const field of corridor.required) {
    if (!v[field] && !out.hasError(field)) out.error(field, 'required_for_corridor', `${field} is required for corridor ${corridor.id} (${corridor.name})`);
  }
  for (const check of corridor.checks) CHECKS[check](v, out);
}
