/**
 * Rules across the rows of one file: the same external_id twice is an error on
 * every line that has it; the same recipient account and amount twice is a
 * warning (repeated payouts are legitimate); the same sender_external_id with
 * different details is a warning.
 *
 * Memory stays small and bounded by the number of rows whatever the data: each
 * row leaves fingerprints in typed arrays (about 33 bytes: 96 bits of its
 * external_id, 64 of its payee and amount, 64 of its sender id and 32 of the
 * sender's details), and all three rules are answered by sorting once the file
 * is read. So their findings arrive at the end, for earlier rows too: a consumer
 * treats every row as provisional until the file is read.
 */
import type { RowFields } from './fields.js';
import type { FieldIssue } from './issue.js';
import { fieldIssue } from './issue.js';
import { LineColumn, U32Column, U8Column, equalGroups, fingerprintOf } from './row-columns.js';

export interface LineFinding {
  line: number;
  severity: 'error' | 'warning';
  issue: FieldIssue;
}

/** Who receives the money: the account (or the pickup phone) the row pays to. */
export function payeeKey(v: RowFields): string {
  if (v.type === 'cash') return `cash:${v.recipient_country_code}:${v.recipient_phone_number}`;
  if (v.recipient_iban) return `iban:${v.recipient_iban}`;
  return `acct:${v.recipient_country_code}:${v.recipient_sort_code ?? v.recipient_bank_code ?? v.recipient_bic ?? ''}:${v.recipient_bank_account}`;
}

const HAS_ID = 1;
const PAYABLE = 2;
const HAS_SENDER = 4;

export class BatchRules {
  private readonly lines = new LineColumn();
  private readonly idA = new U32Column();
  private readonly idB = new U32Column();
  private readonly idC = new U32Column();
  private readonly payA = new U32Column();
  private readonly payB = new U32Column();
  private readonly senderA = new U32Column();
  private readonly senderB = new U32Column();
  private readonly senderDetails = new U32Column();
  private readonly flags = new U8Column();

  /** Makes room for about `rows` rows at once (an estimate; the columns still grow if it was low). */
  reserve(rows: number): void {
    for (const column of [this.idA, this.idB, this.idC, this.payA, this.payB, this.senderA, this.senderB, this.senderDetails, this.flags]) column.reserve(rows);
  }

  /** Records a row: its normalised values, its amount when valid, and its sender's fingerprint. */
  check(line: number, values: RowFields, amount: bigint | null, senderFingerprint: number): void {
    this.lines.push(line);
    const id = fingerprintOf(values.external_id);
    this.idA.push(id[0] as number);
    this.idB.push(id[1] as number);
    this.idC.push(id[2] as number);
    const payable = amount !== null && values.output_currency_code !== undefined;
    const pay = payable ? fingerprintOf(payeeKey(values), values.output_currency_code, (amount as bigint).toString()) : undefined;
    this.payA.push(pay ? (pay[0] as number) : 0);
    this.payB.push(pay ? (pay[1] as number) : 0);
    const sender = fingerprintOf(values.sender_external_id);
    this.senderA.push(sender[0] as number);
    this.senderB.push(sender[1] as number);
    this.senderDetails.push(senderFingerprint % 0x100000000);
    this.flags.push((values.external_id ? HAS_ID : 0) | (payable ? PAYABLE : 0) | (values.sender_external_id ? HAS_SENDER : 0));
  }

  /**
   * Once the file is read: duplicate external ids (errors), repeated payouts and
   * senders with changed details (warnings), by line. A generator: a file may
   * hold many thousands, and a consumer that counts them need not hold them all.
   */
  *finish(): Generator<LineFinding> {
    const count = this.lines.length;
    const line = (row: number): number => this.lines.get(row);
    const flagged = (flag: number) => (row: number): boolean => (this.flags.get(row) & flag) === flag;
    for (const group of equalGroups(count, [this.idA, this.idB, this.idC], flagged(HAS_ID))) {
      const [first, second] = group as [number, number];
      yield { severity: 'error', line: line(first), issue: fieldIssue('external_id', 'duplicate_external_id', `this external_id is also on line ${line(second)}; each row needs its own`) };
      for (const row of group.slice(1)) {
        yield { severity: 'error', line: line(row), issue: fieldIssue('external_id', 'duplicate_external_id', `this external_id is also on line ${line(first)}; each row needs its own`) };
      }
    }
    for (const group of equalGroups(count, [this.payA, this.payB], flagged(PAYABLE))) {
      const first = line(group[0] as number);
      for (const row of group.slice(1)) {
        yield { severity: 'warning', line: line(row), issue: fieldIssue('recipient_bank_account', 'repeated_payout', `the same recipient and amount as line ${first}: check it is meant to be paid twice`) };
      }
    }
    for (const group of equalGroups(count, [this.senderA, this.senderB], flagged(HAS_SENDER))) {
      const first = group[0] as number;
      for (const row of group.slice(1)) {
        if (this.senderDetails.get(row) === this.senderDetails.get(first)) continue;
        yield { severity: 'warning', line: line(row), issue: fieldIssue('sender_external_id', 'sender_details_differ', `this sender_external_id has other details than on line ${line(first)}; the later ones will replace them at the service`) };
      }
    }
  }
}
