/**
 * What can go wrong talking to the payout service, in the few classes a caller
 * decides on (STYLE 6):
 * - Rejected: the service answered and refused (422 and other 4xx); nothing was
 *   done and repeating the same call will not help.
 * - AuthenticationRefused: 401/403; stop the run and tell a person.
 * - Retryable: nothing was done and the same call may succeed later (429, or a
 *   read that failed).
 * - OutcomeUnknown: a write may or may not have taken effect (5xx, timeout,
 *   reset, unreadable answer). Never simply repeated: resolve first [D7].
 */
import { ExitCode, PaybatchError } from '../errors.js';

export interface ServiceErrorItem {
  /** The field the service names, or "base" for the request as a whole. */
  field: string;
  message: string;
}

export class Rejected extends Error {
  constructor(
    readonly status: number,
    readonly errors: ServiceErrorItem[],
    /** `meta` of the answer, e.g. `existing.transaction` for a duplicate external_id [D6]. */
    readonly meta: Record<string, unknown> | undefined,
    what: string,
  ) {
    super(`${what} was refused (${status}): ${errors.map((e) => (e.field === 'base' ? e.message : `${e.field} ${e.message}`)).join('; ') || 'no reason given'}`);
    this.name = 'Rejected';
  }

  /** True when the service refused because the field has this problem, e.g. ('external_id'). */
  concerns(field: string): boolean {
    return this.errors.some((e) => e.field === field || e.field.endsWith(`.${field}`));
  }

  /** The service's own words, without paybatch's "... was refused (422):" prefix. */
  get reasons(): string {
    return this.errors.map((e) => (e.field === 'base' ? e.message : `${e.field} ${e.message}`)).join('; ') || 'no reason given';
  }
}

/** Why a funding was refused [D10], as far as the caller's next step goes. */
export type FundRefusal = 'balance' | 'state' | 'amount' | 'other';

/**
 * [D10], [D5] The balance refusal in every shape the service may give it: an
 * error on `balance`, or a message saying so in the list form
 * (`{"errors": ["balance insufficient funds"]}`); then a state or amount
 * refusal (the transaction or its quote moved: read it again); anything else
 * is a refusal paybatch cannot act on.
 */
export function fundRefusal(error: Rejected): FundRefusal {
  if (error.status !== 422) return 'other';
  const says = (pattern: RegExp): boolean => error.errors.some((e) => pattern.test(`${e.field} ${e.message}`));
  // Words or codes: "balance insufficient funds", "insufficient_funds", "balance_too_low".
  if (error.concerns('balance') || says(/(^|[^a-z])(balance|insufficient[\s_-]*(funds|balance))([^a-z]|$)/i)) return 'balance';
  if (error.concerns('input_amount_in_cents') || error.concerns('input_currency')) return 'amount';
  if (error.concerns('state') || says(/\b(already funded|not (yet )?approved|cancell?ed|cannot be funded|does not accept funding)\b/i)) return 'state';
  return 'other';
}

export class AuthenticationRefused extends PaybatchError {
  constructor(status: number, detail: string) {
    super(`the payout service refused our credentials (${status}: ${detail}); check PAYBATCH_API_KEY and PAYBATCH_API_SECRET`, ExitCode.noPermission);
  }
}

export class Retryable extends Error {
  constructor(
    message: string,
    /** How long the service asked us to wait (429 Retry-After), if it did. */
    readonly retryAfterMs: number | undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'Retryable';
  }
}

export class OutcomeUnknown extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'OutcomeUnknown';
  }
}
