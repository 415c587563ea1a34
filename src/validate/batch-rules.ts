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

/** How many 32-bit numbers a row leaves for the rules across rows (see rowPrints). */
export const PRINTS_PER_ROW = 9;

/**
 * A row's fingerprints for the rules across rows, written into `out` from `at`:
 * its external_id (3 lanes), payee and amount (2), sender id (2), the sender's
 * details (1) and flags (1). Pure: a worker thread makes them as it checks rows.
 */
export function rowPrints(values: RowFields, amount: bigint | null, senderFingerprint: number, out: Uint32Array, at: number): void {
  const id = fingerprintOf(values.external_id);
  out[at] = id[0] as number;
  out[at + 1] = id[1] as number;
  out[at + 2] = id[2] as number;
  const payable = amount !== null && values.output_currency_code !== undefined;
  const pay = payable ? fingerprintOf(payeeKey(values), values.output_currency_code, (amount as bigint).toString()) : undefined;
  out[at + 3] = pay ? (pay[0] as number) : 0;
  out[at + 4] = pay ? (pay[1] as number) : 0;
  const sender = fingerprintOf(values.sender_external_id);
  out[at + 5] = sender[0] as number;
  out[at + 6] = sender[1] as number;
  out[at + 7] = senderFingerprint % 0x100000000;
  out[at + 8] = (values.external_id ? HAS_ID : 0) | (payable ? PAYABLE : 0) | (values.sender_external_id ? HAS_SENDER : 0);
}

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

  private readonly scratch = new Uint32Array(PRINTS_PER_ROW);

  /** Records a row: its normalised values, its amount when valid, and its sender's fingerprint. */
  check(line: number, values: RowFields, amount: bigint | null, senderFingerprint: number): void {
    rowPrints(values, amount, senderFingerprint, this.scratch, 0);
    this.record(line, this.scratch, 0);
  }

  /** Records a row by its fingerprints (see rowPrints), at `at` in `prints`: made elsewhere, by a worker thread. */
  record(line: number, prints: Uint32Array, at: number): void {
    this.lines.push(line);
    this.idA.push(prints[at] as number);
    this.idB.push(prints[at + 1] as number);
    this.idC.push(prints[at + 2] as number);
    this.payA.push(prints[at + 3] as number);
    this.payB.push(prints[at + 4] as number);
    this.senderA.push(prints[at + 5] as number);
    this.senderB.push(prints[at + 6] as number);
    this.senderDetails.push(prints[at + 7] as number);
    this.flags.push(prints[at + 8] as number);
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
