/**
 * ISO 20022 decimal numbers (CtrlSum, InstdAmt) as exact sums: a value is an
 * integer count of 10^-SCALE, so control totals of any currency mix are added
 * and compared without floating point. Pure.
 */

/** ISO 20022's DecimalNumber allows 17 fraction digits; amounts at most 5. */
export const DECIMAL_SCALE = 17;
const SCALE = DECIMAL_SCALE;

/** 10^0 to 10^SCALE as bigints. */
const POWERS: readonly bigint[] = Array.from({ length: SCALE + 1 }, (_, n) => 10n ** BigInt(n));

/** The last text parsed and its value: a transfer's amount is parsed twice (its control sums, then its row). */
let lastText = '';
let lastValue: bigint | null = null;

/** "1234.5" as an exact integer count of 10^-17, or null when it is not a plain non-negative decimal. */
export function parseDecimal(text: string): bigint | null {
  if (text === lastText) return lastValue;
  lastValue = parsed(text);
  lastText = text;
  return lastValue;
}

/**
 * As /^(\d{1,18})(?:\.(\d{1,17}))?$/ reads the text trimmed, without the regular expression's match or the text
 * padded to SCALE digits.
 */
function parsed(text: string): bigint | null {
  const trimmed = text.trim();
  const length = trimmed.length;
  let whole = 0;
  while (whole < length && isDigit(trimmed.charCodeAt(whole))) whole += 1;
  if (whole === 0 || whole > 18) return null;
  let fraction = 0;
  if (whole < length) {
    if (trimmed.charCodeAt(whole) !== 0x2e) return null; // '.'
    while (whole + 1 + fraction < length && isDigit(trimmed.charCodeAt(whole + 1 + fraction))) fraction += 1;
    if (fraction === 0 || fraction > SCALE || whole + 1 + fraction !== length) return null;
  }
  // The digits without the point, read as a bigint and scaled: exact at any length, never through a Number.
  const digits = fraction === 0 ? trimmed : trimmed.slice(0, whole) + trimmed.slice(whole + 1);
  return BigInt(digits) * (POWERS[SCALE - fraction] as bigint);
}

/** An ASCII digit's char code (0 to 9): what a decimal's text and an ISO phone number's country code are made of. */
export const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/** The exact value back as the shortest decimal text ("1234.5"). */
export function formatDecimal(value: bigint): string {
  const digits = value.toString().padStart(SCALE + 1, '0');
  const whole = digits.slice(0, -SCALE);
  const fraction = digits.slice(-SCALE).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}
