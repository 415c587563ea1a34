/**
 * ISO 20022 decimal numbers (CtrlSum, InstdAmt) as exact sums: a value is an
 * integer count of 10^-SCALE, so control totals of any currency mix are added
 * and compared without floating point. Pure.
 */

/** ISO 20022's DecimalNumber allows 17 fraction digits; amounts at most 5. */
export const DECIMAL_SCALE = 17;
const SCALE = DECIMAL_SCALE;

/** "1234.5" as an exact integer count of 10^-17, or null when it is not a plain non-negative decimal. */
export function parseDecimal(text: string): bigint | null {
  const match = /^(\d{1,18})(?:\.(\d{1,17}))?$/.exec(text.trim());
  if (!match) return null;
  return BigInt((match[1] as string) + (match[2] ?? '').padEnd(SCALE, '0'));
}

/** The exact value back as the shortest decimal text ("1234.5"). */
export function formatDecimal(value: bigint): string {
  const digits = value.toString().padStart(SCALE + 1, '0');
  const whole = digits.slice(0, -SCALE);
  const fraction = digits.slice(-SCALE).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}
