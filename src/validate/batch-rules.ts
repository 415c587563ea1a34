/**
 * Rules across the rows of one file: the same external_id twice is an error on
 * both lines; the same recipient account and amount twice is a warning
 * (repeated payouts are legitimate); the same sender with different details is a
 * warning. Memory stays small for a million rows: ids are kept exactly, the
 * rest as compact fingerprints.
 */
import type { RowFields } from './fields.js';
import { SENDER_FIELDS } from './fields.js';
import type { FieldIssue } from './issue.js';
import { fieldIssue } from './issue.js';

export interface LaterFinding {
  /** An earlier line that this row makes invalid. */
  line: number;
  issue: FieldIssue;
}

export interface BatchFindings {
  errors: FieldIssue[];
  warnings: FieldIssue[];
  earlier: LaterFinding[];
}

/** 53-bit FNV-1a style fingerprint: two 32-bit lanes, fast and compact. */
export function fingerprint(text: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) & 0x1fffff);
}

/** Who receives the money: the account (or the pickup phone) the row pays to. */
export function payeeKey(v: RowFields): string {
  if (v.type === 'cash') return `cash:${v.recipient_country_code}:${v.recipient_phone_number}`;
  if (v.recipient_iban) return `iban:${v.recipient_iban}`;
  return `acct:${v.recipient_country_code}:${v.recipient_sort_code ?? v.recipient_bank_code ?? v.recipient_bic ?? ''}:${v.recipient_bank_account}`;
}

export class BatchRules {
  private readonly externalIds = new Map<string, number>();
  private readonly flagged = new Set<number>();
  private readonly payouts = new Map<number, number>();
  private readonly senders = new Map<string, { line: number; details: number }>();

  /** `values` are the row's normalised values; `amount` its minor units, when valid. */
  check(line: number, values: RowFields, amount: bigint | null): BatchFindings {
    const found: BatchFindings = { errors: [], warnings: [], earlier: [] };
    this.checkExternalId(line, values, found);
    this.checkRepeatedPayout(line, values, amount, found);
    this.checkSender(line, values, found);
    return found;
  }

  private checkExternalId(line: number, v: RowFields, found: BatchFindings): void {
    if (!v.external_id) return;
    const first = this.externalIds.get(v.external_id);
    if (first === undefined) {
      this.externalIds.set(v.external_id, line);
      return;
    }
    found.errors.push(fieldIssue('external_id', 'duplicate_external_id', `external_id ${v.external_id} is also on line ${first}; each row needs its own`));
    if (!this.flagged.has(first)) {
      this.flagged.add(first);
      found.earlier.push({ line: first, issue: fieldIssue('external_id', 'duplicate_external_id', `external_id ${v.external_id} is also on line ${line}; each row needs its own`) });
    }
  }

  private checkRepeatedPayout(line: number, v: RowFields, amount: bigint | null, found: BatchFindings): void {
    if (amount === null || !v.output_currency_code) return;
    const key = fingerprint(`${payeeKey(v)}|${v.output_currency_code}|${amount}`);
    const first = this.payouts.get(key);
    if (first === undefined) this.payouts.set(key, line);
    else found.warnings.push(fieldIssue('recipient_bank_account', 'repeated_payout', `the same recipient and amount as line ${first}: check it is meant to be paid twice`));
  }

  private checkSender(line: number, v: RowFields, found: BatchFindings): void {
    if (!v.sender_external_id) return;
    const details = fingerprint(SENDER_FIELDS.map((f) => v[f] ?? '').join('\u0000'));
    const first = this.senders.get(v.sender_external_id);
    if (!first) this.senders.set(v.sender_external_id, { line, details });
    else if (first.details !== details) {
      found.warnings.push(fieldIssue('sender_external_id', 'sender_details_differ', `sender ${v.sender_external_id} has other details than on line ${first.line}; the later ones will replace them at the service`));
    }
  }
}
