/**
 * [D15] The sandbox's catalogue of `state_reason_details.code` values, with the
 * technical text it puts in `state_reason`. Clients decide on `state`, never on
 * these; they are carried into reports for people.
 */
export const REASON_CODES = {
  provider_unavailable: 'The payout provider did not accept the payout; it will be retried.',
  recipient_phone_number_invalid: 'The recipient phone number is not valid for a cash pickup.',
  recipient_bank_account_invalid: 'The recipient bank account was refused by the provider.',
  recipient_account_invalid: 'The recipient account is invalid; the payout needs a person or a cancellation.',
  provider_timeout: 'No response from the payout provider in time; it is unknown whether payout happened.',
  internal_exception: 'An exception happened while processing the payout.',
  funding_window_expired: 'The transaction was not funded within the funding window and was cancelled.',
  cancelled_by_client: 'The transaction was cancelled at the client\'s request.',
  sender_rejected: 'The sender failed sanction list checks.',
  forced_by_operator: 'The state was set through the sandbox operator controls.',
} as const;

export type ReasonCode = keyof typeof REASON_CODES;
