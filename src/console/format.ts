/** Text for pages: escaping, amounts in major units with their currency, ages. Pure. */
import { currencyDecimals, formatMoney } from '../validate/money.js';
import { NOT_PAID_PHASES, REASONS, UNPAID_FINAL_STATES } from '../payout-states.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Every value put in a page goes through this. */
export const esc = (value: unknown): string => String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

/** Minor units (an integer string) as major units with the currency's decimals: "123456", "USD" → "1,234.56 USD". */
export function major(minor: string | null | undefined, currency: string | null | undefined): string {
  if (minor === null || minor === undefined || minor === '' || !currency) return '';
  return formatMoney(minor, currency);
}

/** Minor units as a plain decimal in major units, as typed in a form: "250000", "USD" → "2500.00". */
export function plainMajor(minor: string, currency: string): string {
  const decimals = currencyDecimals(currency) ?? 2;
  const digits = minor.padStart(decimals + 1, '0');
  return decimals > 0 ? `${digits.slice(0, digits.length - decimals)}.${digits.slice(digits.length - decimals)}` : digits;
}

/** Seconds as "45s", "12m", "3h", "2d". */
export function age(seconds: number): string {
  if (seconds < 120) return `${Math.max(0, Math.round(seconds))}s`;
  if (seconds < 7_200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3_600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

/**
 * What a row's amount is, for its label beside the figure: paid out only once the
 * service says paid; to pay while it may still be; not paid once it cannot be.
 */
export function payoutLabel(state: string): 'paid out' | 'to pay' | 'not paid' {
  if (state === 'paid') return 'paid out';
  return NOT_PAID.has(state) ? 'not paid' : 'to pay';
}

/** States in which the row's output amount will not be paid (final without payment, or never sent). */
const NOT_PAID: ReadonlySet<string> = new Set<string>([
  ...UNPAID_FINAL_STATES, ...NOT_PAID_PHASES, 'rejected', 'returned', REASONS.externalIdAlreadyUsed, REASONS.approvalRejected, REASONS.approvalExpired,
]);

/** What a row's input amount is: refunded (debited, then credited back), funded (debited), or only an estimate. */
export function fundingLabel(state: string, funded: boolean): 'refunded' | 'funded' | 'not funded' {
  if (funded && state === 'refunded') return 'refunded';
  return funded ? 'funded' : 'not funded';
}
