/**
 * Rules across the rows of one file: the same external_id twice is an error on
 * every line that has it; the same recipient account and amount twice is a
 * warning (repeated payouts are legitimate); the same sender_external_id with
 * different details is a warning.
 *
 * Memory stays small whatever the number of rows: each row leaves fingerprints
 * (96 bits of its external_id, 64 of its payee and amount, 64 of its sender id
 * and 32 of the sender's details) in partitions that spill to a scratch file
 * (key-partitions.ts), and all three rules are answered one partition at a time
 * once the file is read. So their findings arrive at the end, for earlier rows
 * too: a consumer treats every row as provisional until the file is read.
 */
import type { RowFields } from './fields.js';
import type { FieldIssue } from './issue.js';
import { fieldIssue } from './issue.js';
import type { Spill } from './key-partitions.js';
import { KeyPartitions, MemorySpill } from './key-partitions.js';
import { LineColumn, fingerprintOf } from './row-columns.js';

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
  private readonly ids: KeyPartitions;
  private readonly payouts: KeyPartitions;
  private readonly senders: KeyPartitions;
  private readonly scratch = new Uint32Array(PRINTS_PER_ROW);

  /** `spill`: where the fingerprints go beyond a few hundred rows a partition (a scratch file for a batch; memory by default). */
  constructor(private readonly spill: Spill = new MemorySpill()) {
    this.ids = new KeyPartitions(spill);
    this.payouts = new KeyPartitions(spill);
    this.senders = new KeyPartitions(spill);
  }

  /** Records a row: its normalised values, its amount when valid, and its sender's fingerprint. */
  check(line: number, values: RowFields, amount: bigint | null, senderFingerprint: number): void {
    rowPrints(values, amount, senderFingerprint, this.scratch, 0);
    this.record(line, this.scratch, 0);
  }

  /** Records a row by its fingerprints (see rowPrints), at `at` in `prints`: made elsewhere, by a worker thread. */
  record(line: number, prints: Uint32Array, at: number): void {
    const row = this.lines.length;
    this.lines.push(line);
    const flags = prints[at + 8] as number;
    if (flags & HAS_ID) this.ids.add(row, prints[at] as number, prints[at + 1] as number, prints[at + 2] as number, 0);
    if (flags & PAYABLE) this.payouts.add(row, prints[at + 3] as number, prints[at + 4] as number, 0, 0);
    if (flags & HAS_SENDER) this.senders.add(row, prints[at + 5] as number, prints[at + 6] as number, 0, prints[at + 7] as number);
  }

  /**
   * Once the file is read: duplicate external ids (errors), repeated payouts and
   * senders with changed details (warnings), by line. A generator: a file may
   * hold many thousands, and a consumer that counts them need not hold them all.
   * The spill is given back when it ends (or by `close`, when it is not read to the end).
   */
  *finish(): Generator<LineFinding> {
    try {
      const line = (row: number): number => this.lines.get(row);
      for (const { rows } of this.ids.groups()) {
        const first = rows[0] as number;
        const second = rows[1] as number;
        yield { severity: 'error', line: line(first), issue: fieldIssue('external_id', 'duplicate_external_id', `this external_id is also on line ${line(second)}; each row needs its own`) };
        for (const row of rows.slice(1)) {
          yield { severity: 'error', line: line(row), issue: fieldIssue('external_id', 'duplicate_external_id', `this external_id is also on line ${line(first)}; each row needs its own`) };
        }
      }
      for (const { rows } of this.payouts.groups()) {
        const first = line(rows[0] as number);
        for (const row of rows.slice(1)) {
          yield { severity: 'warning', line: line(row), issue: fieldIssue('recipient_bank_account', 'repeated_payout', `the same recipient and amount as line ${first}: check it is meant to be paid twice`) };
        }
      }
      for (const { rows, extras } of this.senders.groups()) {
        for (let member = 1; member < rows.length; member++) {
          if (extras[member] === extras[0]) continue;
          yield { severity: 'warning', line: line(rows[member] as number), issue: fieldIssue('sender_external_id', 'sender_details_differ', `this sender_external_id has other details than on line ${line(rows[0] as number)}; the later ones will replace them at the service`) };
        }
      }
    } finally {
      this.close();
    }
  }

  /** Gives back the spill (a scratch file's descriptor); safe to call more than once. */
  close(): void {
    this.spill.close();
  }
}
