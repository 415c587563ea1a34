/**
 * paybatch's reason codes as ISO 20022 external status reason codes (the
 * ExternalStatusReason1Code list), for a pain.002 that an ERP reads to mark
 * invoices paid or rejected. Where no code fits, NARR with the text. The
 * table is docs/iso20022.md's "Reason codes". Pure.
 */

/** A reason code (paybatch's own, the service's state_reason code, or a validation error's) to its ISO code. */
const ISO_REASONS: Readonly<Record<string, string>> = {
  // The account or the bank, as validated or as the service's provider refused it.
  iban_invalid_checksum: 'AC01', iban_invalid_format: 'AC01', iban_invalid_length: 'AC01', iban_wrong_country: 'AC01', iban_of_recipient_country: 'AC01',
  bank_account_invalid: 'AC01', nuban_check_digit: 'AC01', nuban_invalid_length: 'AC01', uk_modulus_check_failed: 'AC01', uk_sort_code_and_account: 'AC01',
  recipient_bank_account_invalid: 'AC01', recipient_account_invalid: 'AC01',
  account_closed: 'AC04', recipient_account_closed: 'AC04',
  sort_code_invalid: 'RC01', bank_code_invalid: 'RC01', bic_invalid: 'RC01', bic_country_differs: 'RC01',
  // The amount and the currency.
  amount_invalid: 'AM12', amount_not_positive: 'AM12', amount_too_precise: 'AM12', amount_too_large: 'AM12', amount_ambiguous: 'AM12',
  amount_over_limit: 'AM02', quote_rejected: 'AM02', over_budget: 'AM02',
  invalid_currency: 'AM11', no_corridor: 'AM11', corridor_inactive: 'AM11',
  insufficient_funds: 'AM04',
  duplicate_external_id: 'AM05', external_id_already_used: 'AM05', repeated_payout: 'AM05',
  // The creditor's details.
  required: 'BE01', required_for_corridor: 'BE01', phone_invalid: 'BE01', phone_not_e164: 'BE01', phone_not_mobile: 'BE01', phone_wrong_country: 'BE01',
  recipient_phone_number_invalid: 'BE01', country_unknown: 'BE01', invalid_country: 'BE01',
  // Cancelled, by request or by the people who sign off.
  cancelled_on_request: 'DS02', cancelled_by_client: 'DS02', approval_rejected: 'DS02',
  // The debtor's side: compliance.
  sender_rejected: 'RR04',
};

export interface IsoReason {
  code: string;
  /** The words beside the code (always for NARR), at most 105 characters as AddtlInf allows. */
  text: string;
}

/** The ISO status reason of an unpaid row, from its reason code and text. */
export function isoReason(code: string, text: string): IsoReason {
  const iso = ISO_REASONS[code];
  const words = (iso === undefined ? `${code}: ${text}` : text).replace(/\s+/g, ' ').trim();
  return { code: iso ?? 'NARR', text: words.length > 105 ? `${words.slice(0, 104)}…` : words };
}
