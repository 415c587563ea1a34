/**
 * Money as integer minor units [2.1], [8]: decimal strings become bigint without
 * floating point, with ISO 4217 decimals (JPY 0, KWD 3, most 2).
 */
import currencyCodes from 'currency-codes';

/** currency-codes searches a list on every call; every row asks, so the answers are kept. */
const decimalsByCode = new Map<string, number | undefined>();

export function currencyDecimals(code: string): number | undefined {
  if (decimalsByCode.has(code)) return decimalsByCode.get(code);
  const decimals = /^[A-Z]{3}$/.test(code) ? currencyCodes.code(code)?.digits : undefined;
  if (decimalsByCode.size < 1000) decimalsByCode.set(code, decimals);
  return decimals;
}

/** 18 digits of minor units: what the service accepts, and what fits a signed 64-bit integer. */
export const MAX_MINOR_UNITS = 999_999_999_999_999_999n;

export type AmountResult = { ok: true; minor: bigint } | { ok: false; code: string; message: string };

/**
 * "1234.56" in a currency of 2 decimals is 123456n. Trailing zeros beyond the
 * currency's decimals are accepted (the value is still exact); any other extra
 * digit is an error, never rounded away.
 */
export function parseMajorAmount(text: string, decimals: number, decimalSeparator: '.' | ',' = '.'): AmountResult {
  const other = decimalSeparator === '.' ? ',' : '.';
  if (text.startsWith('-')) return { ok: false, code: 'amount_not_positive', message: `the amount ${text} is negative; amounts must be positive` };
  const pattern = decimalSeparator === '.' ? /^(\d+)(?:\.(\d+))?$/ : /^(\d+)(?:,(\d+))?$/;
  const match = pattern.exec(text);
  if (!match) {
    const hint = text.includes(other) && /^[\d.,]+$/.test(text)
      ? ` (the decimal separator is "${decimalSeparator}"; thousands separators are not allowed)`
      : '';
    return { ok: false, code: 'amount_invalid', message: `"${text}" is not a plain decimal amount${hint}` };
  }
  const whole = match[1] as string;
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > decimals) {
    return { ok: false, code: 'amount_too_precise', message: `${text} has ${fraction.length} decimal places; the currency has ${decimals}` };
  }
  const minor = BigInt(whole + fraction.padEnd(decimals, '0'));
  if (minor > MAX_MINOR_UNITS) return { ok: false, code: 'amount_too_large', message: `${text} is too large` };
  if (minor === 0n) return { ok: false, code: 'amount_not_positive', message: 'the amount must be greater than zero' };
  return { ok: true, minor };
}

/** "123456" minor units, in minor units: digits only, positive. */
export function parseMinorAmount(text: string): AmountResult {
  if (!/^\d{1,18}$/.test(text)) {
    return { ok: false, code: 'amount_invalid', message: `"${text}" is not a whole number of minor units` };
  }
  const minor = BigInt(text);
  if (minor === 0n) return { ok: false, code: 'amount_not_positive', message: 'the amount must be greater than zero' };
  return { ok: true, minor };
}

/** 123456n with 2 decimals is "1234.56"; exact, for people and reports. */
export function formatMinor(minor: bigint, decimals: number): string {
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(decimals + 1, '0');
  const whole = decimals === 0 ? digits : digits.slice(0, -decimals);
  const fraction = decimals === 0 ? '' : `.${digits.slice(-decimals)}`;
  return `${negative ? '-' : ''}${whole}${fraction}`;
}

/**
 * Money a person reads: minor units as major units with thousands separators and
 * the currency code, "123456789", "GBP" → "1,234,567.89 GBP"; "5000", "JPY" →
 * "5,000 JPY"; "1234", "KWD" → "1.234 KWD". Exact (digits only, never a float).
 * The one formatter for every figure shown to people: status, preview, run,
 * notifications, approval statements and the console. A value that is not a
 * whole number is shown as it is, beside its currency, rather than guessed at.
 */
export function formatMoney(minor: bigint | string, currency: string): string {
  const text = typeof minor === 'bigint' ? minor.toString() : minor.trim();
  if (!/^-?\d+$/.test(text)) return `${text} ${currency}`;
  const decimals = currencyDecimals(currency) ?? 2;
  const negative = text.startsWith('-');
  const digits = (negative ? text.slice(1) : text).replace(/^0+(?=\d)/, '').padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const fraction = decimals > 0 ? `.${digits.slice(digits.length - decimals)}` : '';
  return `${negative ? '-' : ''}${whole}${fraction} ${currency}`;
}

/** Each currency's amount, formatted and joined: {GBP: "150000", USD: "2500"} → "1,500.00 GBP, 25.00 USD". */
export function formatMoneyMap(amounts: Readonly<Record<string, string | bigint>> | ReadonlyMap<string, string | bigint>): string {
  const entries = amounts instanceof Map ? [...amounts.entries()] : Object.entries(amounts);
  return entries.map(([currency, minor]) => formatMoney(minor as string | bigint, currency)).join(', ');
}

/** Major units beside the minor units a signed statement carries: "3182", "USD" → "31.82 USD (3182 in minor units)". */
export const formatMoneyAndMinor = (minor: bigint | string, currency: string): string => `${formatMoney(minor, currency)} (${minor.toString()} in minor units)`;
