/**
 * The rows a preview lists, so that an approver need not open the file: line,
 * external_id, recipient's name, masked account, amount with its currency, and
 * corridor; and the rows far above the batch's usual amounts (outliers), warned
 * of before anyone signs. Pure: fed one row at a time by preview.ts.
 */
import type { PayoutRequest } from '../api/payout-request.js';
import { recipientName } from '../batch/payout-request.js';
import { findCorridor } from '../validate/corridors.js';
import { formatMoney } from '../validate/money.js';
import type { Outlier } from '../validate/outliers.js';
import { OutlierWatch } from '../validate/outliers.js';

export interface PreviewRow {
  line: number;
  external_id: string;
  recipient_name: string | null;
  /** Where the money goes, masked: the last four characters of the IBAN, account or phone number. */
  account: string;
  /** Minor units, for machines. */
  amount: string;
  currency: string;
  /** The amount for people: "1,250.00 GBP". */
  amount_text: string;
  /** The corridor's id (config/corridors.json), or type and country when none matches. */
  corridor: string;
}

/** "GB29NWBK60161331926819" → "GB29…6819"; "31926819" → "…6819"; short values show no more than their last four. */
export function maskAccount(value: string): string {
  const compact = value.replace(/\s+/g, '');
  const last = compact.slice(-4);
  if (compact.length <= 4) return `…${last.slice(-2)}`;
  return /^[A-Z]{2}\d{2}/.test(compact) && compact.length > 12 ? `${compact.slice(0, 4)}…${last}` : `…${last}`;
}

function accountOf(recipient: Readonly<Record<string, string>>): string {
  const value = recipient.iban ?? recipient.bank_account ?? recipient.phone_number;
  return value ? maskAccount(value) : '';
}

export function previewRow(line: number, request: PayoutRequest): PreviewRow {
  const country = request.recipient.country_code ?? '';
  const corridor = findCorridor({ country, type: request.type, input: request.input_currency_code, output: request.output_currency_code });
  return {
    line, external_id: request.external_id, recipient_name: recipientName(request), account: accountOf(request.recipient),
    amount: request.output_amount_in_cents, currency: request.output_currency_code,
    amount_text: formatMoney(request.output_amount_in_cents, request.output_currency_code),
    corridor: corridor?.id ?? `${request.type} to ${country}`,
  };
}

/** Collects the rows to send as a preview reads them, then gives the list and its outliers. */
export class PreviewRows {
  private readonly rows: PreviewRow[] = [];
  private readonly watch = new OutlierWatch();

  add(line: number, request: PayoutRequest): void {
    const row = previewRow(line, request);
    this.rows.push(row);
    this.watch.add(line, row.external_id, row.currency, BigInt(row.amount));
  }

  /** `warnAt`: batch.warn_row_amount in minor units. */
  finish(warnAt: Readonly<Record<string, bigint>>): { payees: PreviewRow[]; outliers: Outlier[] } {
    return { payees: this.rows.sort((a, b) => a.line - b.line), outliers: this.watch.outliers(warnAt) };
  }
}
