/**
 * Text the service supplies (refusal messages, state_reason, the fields of an
 * answer that is not ours) may quote an account number, and it goes into logs
 * and result files. Account-like runs are shortened to their last four
 * characters before anything keeps them: IBANs, and runs of eight or more digits
 * (bank accounts, card and phone numbers). Pure.
 */
const IBAN = /\b([A-Z]{2}\d{2})[A-Z0-9]{7,30}([A-Z0-9]{4})\b/g;
const LONG_DIGITS = /\d{4,}(\d{4})/g;

export function redactAccountNumbers(text: string): string {
  return text.replace(IBAN, '$1…$2').replace(LONG_DIGITS, (run: string, last: string) => (run.length >= 8 ? `…${last}` : run));
}

/** Text with the user and password of every URL in it left out: `https://user:secret@host` → `https://[redacted]@host`. */
export function withoutUrlCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s"'<>]+@/gi, '$1[redacted]@');
}
