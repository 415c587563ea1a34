/**
 * Deterministic outcomes for testing, chosen by the last two digits of the
 * recipient's account identifier (documented in docs/sandbox.md, "Deterministic outcomes").
 */
export type Outcome =
  | 'normal'
  | 'quick'
  | 'slow'
  | 'error_then_paid'
  | 'error_permanent'
  | 'manual'
  | 'stuck'
  | 'exception';

export const OUTCOME_BY_SUFFIX: Readonly<Record<string, Outcome>> = {
  '11': 'quick',
  '22': 'slow',
  '33': 'error_then_paid',
  '44': 'error_permanent',
  '55': 'manual',
  '66': 'stuck',
  '77': 'exception',
};

/** The identifier whose digits decide: the phone for cash, else the IBAN or account number. */
export function outcomeKey(type: string, recipient: Record<string, unknown>): string {
  const pick = (field: string): string => (typeof recipient[field] === 'string' ? (recipient[field] as string) : '');
  if (type === 'cash') return pick('phone_number');
  return pick('iban') || pick('bank_account');
}

export function outcomeFor(type: string, recipient: Record<string, unknown>): Outcome {
  const digits = outcomeKey(type, recipient).replace(/\D/g, '');
  return OUTCOME_BY_SUFFIX[digits.slice(-2)] ?? 'normal';
}
