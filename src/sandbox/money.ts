/**
 * The sandbox's own money rules: ISO 4217 minor units and the exchange of D9.
 * Everything is integer arithmetic on bigint; a rate is a decimal string.
 */
import currencyCodes from 'currency-codes';

/** Decimal places of an ISO 4217 currency, or undefined for an unknown code. */
export function currencyDecimals(code: string): number | undefined {
  if (!/^[A-Z]{3}$/.test(code)) return undefined;
  const entry = currencyCodes.code(code);
  return entry ? entry.digits : undefined;
}

const pow10 = (n: number): bigint => 10n ** BigInt(n);

/** A decimal string ("0.7912") as an exact fraction numerator / 10^scale. */
export function parseDecimal(text: string): { numerator: bigint; scale: number } {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) throw new Error(`not a decimal number: ${text}`);
  const fraction = match[2] ?? '';
  return { numerator: BigInt((match[1] ?? '0') + fraction), scale: fraction.length };
}

/**
 * [D9] The input amount is the output amount divided by the rate (output units
 * per one input unit), rounded up to the input currency's minor unit.
 */
export function inputAmountFor(
  outputMinor: bigint,
  outputDecimals: number,
  inputDecimals: number,
  rate: string,
): bigint {
  const { numerator, scale } = parseDecimal(rate);
  if (numerator === 0n) throw new Error('a rate of zero cannot be used');
  const dividend = outputMinor * pow10(scale) * pow10(inputDecimals);
  const divisor = numerator * pow10(outputDecimals);
  return (dividend + divisor - 1n) / divisor;
}
