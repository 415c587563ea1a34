/**
 * Bank account rules: IBAN (ISO 13616, per-country length and format), BIC
 * (ISO 9362), the UK sort code and account modulus check (Vocalink's published
 * tables), and the Nigerian NUBAN check digit (CBN standard).
 */
import { isValidBIC, validateIBAN, ValidationErrorsIBAN } from 'ibantools';
import { validateAccountDetails } from 'uk-modulus-check';

export type IbanVerdict = 'valid' | 'checksum' | 'length' | 'format' | 'country_unknown';

export function checkIban(iban: string): IbanVerdict {
  const result = validateIBAN(iban);
  if (result.valid) return 'valid';
  const codes = result.errorCodes;
  const E = ValidationErrorsIBAN;
  if (codes.includes(E.NoIBANCountry)) return 'country_unknown';
  if (codes.includes(E.WrongBBANLength)) return 'length';
  if (codes.includes(E.WrongBBANFormat) || codes.includes(E.ChecksumNotNumber)) return 'format';
  return 'checksum';
}

/** Spaces and lower case as people write IBANs, removed: the electronic format. */
export const ibanElectronic = (text: string): string => text.replace(/[\s-]+/g, '').toUpperCase();

export const isValidBic = (bic: string): boolean => isValidBIC(bic);

/** True when Vocalink's rules accept the pair; a sort code outside its tables cannot be checked and passes. */
export function ukModulusValid(sortCode: string, account: string): boolean {
  return validateAccountDetails(sortCode, account);
}

const NUBAN_WEIGHTS = [3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3];

/**
 * CBN NUBAN: the check digit (10th) of a 10-digit account is computed over the
 * institution code and the 9-digit serial. Three-digit bank codes are padded to
 * six with leading zeros, which keeps the original 12-digit algorithm's result.
 */
export function nubanCheckDigit(bankCode: string, serial: string): number {
  const digits = bankCode.padStart(6, '0') + serial;
  let sum = 0;
  for (let i = 0; i < 15; i++) sum += Number(digits[i]) * (NUBAN_WEIGHTS[i] as number);
  return (10 - (sum % 10)) % 10;
}

export function nubanValid(bankCode: string, account: string): boolean {
  if (!/^\d{10}$/.test(account) || !/^(\d{3}|\d{6})$/.test(bankCode)) return false;
  return nubanCheckDigit(bankCode, account.slice(0, 9)) === Number(account[9]);
}
