/**
 * Values a pain.001 gave, fitted to what the pain.002 schema allows before
 * they are written back. paybatch reads files the schema would refuse (an
 * EndToEndId of 40 characters is a valid external_id; an amount "12,50" is an
 * invalid row, not an unreadable file), and its report must still be one that
 * a bank's or an ERP's validator takes. A value that does not fit is never
 * turned into another value: an optional element is left out, a required one
 * takes ISO's placeholder NOTPROVIDED. Pure.
 */

/** ISO 20022 counts characters, not UTF-16 code units. */
const length = (text: string): number => [...text].length;

/** Max35Text (MsgId, PmtInfId, EndToEndId): 1 to 35 characters, or null. */
export function max35(text: string): string | null {
  const n = length(text);
  return n >= 1 && n <= 35 ? text : null;
}

/** A required Max35Text: the value, or NOTPROVIDED when the file's does not fit. */
export const requiredMax35 = (text: string): string => max35(text) ?? 'NOTPROVIDED';

/** Max15NumericText (NbOfTxs). */
export const numericCount = (text: string): string | null => (/^[0-9]{1,15}$/.test(text) ? text : null);

/** An XSD decimal with at most `total` significant digits, `fraction` of them after the point. */
function decimal(text: string, total: number, fraction: number): string | null {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return null;
  const whole = (match[1] as string).replace(/^0+/, '');
  const decimals = (match[2] ?? '').replace(/0+$/, '');
  return decimals.length <= fraction && whole.length + decimals.length <= total ? text : null;
}

/** DecimalNumber (CtrlSum): 18 digits, 17 after the point. */
export const decimalNumber = (text: string): string | null => decimal(text, 18, 17);

/** ActiveOrHistoricCurrencyAndAmount (InstdAmt): 18 digits, 5 after the point, and a currency of three capitals. */
export function currencyAmount(amount: string, currency: string): { amount: string; currency: string } | null {
  return decimal(amount, 18, 5) !== null && /^[A-Z]{3}$/.test(currency) ? { amount, currency } : null;
}
