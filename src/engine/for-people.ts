/** Amounts and durations as people read them, in messages and on screens (major units with the currency code). */
import { currencyDecimals, formatMinor } from '../validate/money.js';

/** An amount for people: "6000.00 USD". */
export function money(minor: string | bigint, currency: string): string {
  const decimals = currencyDecimals(currency) ?? 2;
  return `${formatMinor(BigInt(minor), decimals)} ${currency}`;
}

/** A duration for people: "50m", "2h", "90s". */
export function duration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}
