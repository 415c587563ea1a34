/**
 * The recipient account a payout pays to, written one way whatever the file's
 * spelling, so that two rows paying the same account are seen as such (the
 * possible-duplicate check, engine/duplicates.ts). Pure: no I/O.
 *
 * In order: a cash pickup pays a phone; an IBAN names the account alone; a UK
 * sort code and account; an account and a bank code (NUBAN and the like); an
 * account and a BIC. A row naming none of these has no key and is not checked.
 */
import { ibanElectronic } from './bank-accounts.js';

/** What of a request the key is made from: its payout type and recipient (without the column prefix). */
export interface RecipientOf {
  type: string;
  recipient: Readonly<Record<string, string | undefined>>;
}

/** Digits and letters only, upper case: spaces, dashes and dots are how people write account numbers, not part of them. */
const compact = (text: string): string => text.replace(/[^0-9A-Za-z]/g, '').toUpperCase();

/** A phone number as its digits, with the + of an international number kept (E.164). */
const phoneDigits = (text: string): string => `${text.trim().startsWith('+') ? '+' : ''}${text.replace(/\D/g, '')}`;

/** The normalised recipient account of a request, or null when it names none. */
export function recipientKey(request: RecipientOf): string | null {
  const r = request.recipient;
  const account = r.bank_account ? compact(r.bank_account) : '';
  if (request.type === 'cash' || (!account && !r.iban && r.phone_number)) {
    const phone = r.phone_number ? phoneDigits(r.phone_number) : '';
    return phone.replace('+', '') === '' ? null : `phone:${phone}`;
  }
  if (r.iban) {
    const iban = compact(ibanElectronic(r.iban));
    return iban === '' ? null : `iban:${iban}`;
  }
  if (!account) return null;
  if (r.sort_code) return `sort:${compact(r.sort_code)}:${account}`;
  const country = (r.country_code ?? '').toUpperCase();
  if (r.bank_code) return `bank:${country}:${compact(r.bank_code)}:${account}`;
  // A BIC's branch part (its last three letters, XXX for the head office) names no other account.
  if (r.bic) return `bic:${country}:${compact(r.bic).slice(0, 8)}:${account}`;
  return `account:${country}:${account}`;
}
