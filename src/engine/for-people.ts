/** Amounts and durations as people read them, in messages and on screens (major units with the currency code). */
import { formatMoney } from '../validate/money.js';

/** An amount for people, "6,000.00 USD": the one formatter (validate/money.ts), named here for the engine's messages. */
export const money = formatMoney;

/** A duration for people: "50m", "2h", "90s". */
export function duration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}
