/**
 * Rules across the rows of one file: the same external_id twice is an error on
 * every line that has it; the same recipient account and amount twice is a
 * warning (repeated payouts are legitimate); the same sender with different
 * details is a warning.
 *
 * Memory stays small for a million rows: each row leaves 96-bit fingerprints and
 * its line in typed arrays (about 25 bytes), and duplicates are found by one sort
 * when the file ends. So duplicate findings arrive at the end, for earlier rows
 * too: a consumer treats every row as provisional until the file is read.
 */
import type { RowFields } from './fields.js';
import { SENDER_FIELDS } from './fields.js';
import type { FieldIssue } from './issue.js';
import { fieldIssue } from './issue.js';
import { LineColumn, U32Column, U8Column, equalGroups, fingerprint96 } from './row-columns.js';

export interface LineFinding {
  line: number;
  issue: FieldIssue;
}

/** Who receives the money: the account (or the pickup phone) the row pays to. */
export function payeeKey(v: RowFields): string {
  if (v.type === 'cash') return `cash:${v.recipient_country_code}:${v.recipient_phone_number}`;
  if (v.recipient_iban) return `iban:${v.recipient_iban}`;
  return `acct:${v.recipient_country_code}:${v.recipient_sort_code ?? v.recipient_bank_code ?? v.recipient_bic ?? ''}:${v.recipient_bank_account}`;
}

export class BatchRules {
  private readonly lines = new LineColumn();
  private readonly idA = new U32Column();
  private readonly idB = new U32Column();
  private readonly idC = new U32Column();
  private readonly payA = new U32Column();
  private readonly payB = new U32Column();
  /** Bit 1: the row has an external_id; bit 2: it has a valid amount (so it can repeat a payout). */
  private readonly flags = new U8Column();
  /** Sender id to the first line and a fingerprint of its details (senders repeat: few entries). */
  private readonly senders = new Map<string, { line: number; details: number }>();

  /** Records the row; returns what can be told at once (a sender whose details changed). */
  check(line: number, values: RowFields, amount: bigint | null): FieldIssue[] {
    const [ia, ib, ic] = fingerprint96([values.external_id]);
    this.lines.push(line);
    this.idA.push(ia);
    this.idB.push(ib);
    this.idC.push(ic);
    const payable = amount !== null && values.output_currency_code !== undefined;
    const [pa, pb] = payable ? fingerprint96([payeeKey(values), values.output_currency_code, (amount as bigint).toString()]) : [0, 0];
    this.payA.push(pa);
    this.payB.push(pb);
    this.flags.push((values.external_id ? 1 : 0) | (payable ? 2 : 0));
    return this.checkSender(line, values);
  }

  /**
   * Once the file is read: the duplicate external ids (errors) and repeated
   * payouts (warnings), by line. A generator: a file may hold many thousands,
   * and a consumer that counts them need not hold them all.
   */
  *finish(): Generator<LineFinding & { severity: 'error' | 'warning' }> {
    const count = this.lines.length;
    const line = (row: number): number => this.lines.get(row);
    for (const group of equalGroups(count, [this.idA, this.idB, this.idC], (row) => (this.flags.get(row) & 1) === 1)) {
      const [first, second] = group as [number, number];
      yield { severity: 'error', line: line(first), issue: fieldIssue('external_id', 'duplicate_external_id', `this external_id is also on line ${line(second)}; each row needs its own`) };
      for (const row of group.slice(1)) {
        yield { severity: 'error', line: line(row), issue: fieldIssue('external_id', 'duplicate_external_id', `this external_id is also on line ${line(first)}; each row needs its own`) };
      }
    }
    for (const group of equalGroups(count, [this.payA, this.payB], (row) => (this.flags.get(row) & 2) === 2)) {
      const first = line(group[0] as number);
      for (const row of group.slice(1)) {
        yield { severity: 'warning', line: line(row), issue: fieldIssue('recipient_bank_account', 'repeated_payout', `the same recipient and amount as line ${first}: check it is meant to be paid twice`) };
      }
    }
  }

  private checkSender(line: number, v: RowFields): FieldIssue[] {
    if (!v.sender_external_id) return [];
    const [a, b] = fingerprint96(SENDER_FIELDS.map((f) => v[f]));
    const details = a * 0x200000 + (b & 0x1fffff);
    const first = this.senders.get(v.sender_external_id);
    if (!first) {
      this.senders.set(v.sender_external_id, { line, details });
      return [];
    }
    if (first.details === details) return [];
    return [fieldIssue('sender_external_id', 'sender_details_differ', `sender ${v.sender_external_id} has other details than on line ${first.line}; the later ones will replace them at the service`)];
  }
}
