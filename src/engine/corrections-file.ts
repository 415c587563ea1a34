/**
 * `paybatch corrections BATCH` and `paybatch retry BATCH --reason R`: a
 * corrections file of the rows of a batch that ended unpaid, each with the
 * external_id its correction must carry, the row it pays again, why it was not
 * paid and what to fix. Dropped in the inbox (or `paybatch resubmit FILE`), it
 * is a batch of its own, checked row by row against its originals
 * (correction-intake.ts). Its values are written exactly, never guarded
 * against spreadsheet formulas: it is meant to come back.
 */
import { stringify } from 'csv-stringify/sync';
import { findCorridor } from '../validate/corridors.js';
import { CORRECTION_FIELDS, RECIPIENT_FIELDS, SENDER_FIELDS } from '../validate/fields.js';
import type { RowFields } from '../validate/fields.js';
import { currencyDecimals } from '../validate/money.js';
import { resultReason } from '../reports/results.js';
import type { IntakeStore, RowRecord } from '../store/port.js';
import { correctionExternalId, unpaid } from './corrections.js';
import type { Unpaid } from './corrections.js';

/** The columns of a corrections file: a batch file's, amounts in major units, then the corrections' own. */
export const CORRECTION_COLUMNS: readonly string[] = [
  'external_id', 'type', 'input_currency_code', 'output_currency_code', 'output_amount',
  ...SENDER_FIELDS, ...RECIPIENT_FIELDS, ...CORRECTION_FIELDS,
];

/** Minor units as a plain decimal of major units ("125000", "GBP" → "1250.00"), exactly. */
function majorText(minor: string, currency: string): string {
  const decimals = currencyDecimals(currency) ?? 2;
  if (decimals === 0 || !/^\d+$/.test(minor)) return minor;
  const digits = minor.padStart(decimals + 1, '0');
  return `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
}

/** The row's values as a batch file's columns: from the request sent, or as read for an invalid row. */
function valuesOf(row: RowRecord): RowFields {
  if (!row.request) return { ...(row.fields ?? {}), external_id: row.fields?.external_id ?? row.external_id ?? undefined };
  const r = row.request;
  const values: Record<string, string> = {
    external_id: r.external_id, type: r.type, input_currency_code: r.input_currency_code, output_currency_code: r.output_currency_code,
    output_amount: majorText(r.output_amount_in_cents, r.output_currency_code),
  };
  for (const [k, v] of Object.entries(r.sender)) values[`sender_${k}`] = v;
  for (const [k, v] of Object.entries(r.recipient)) values[`recipient_${k}`] = v;
  return values as RowFields;
}

export interface CorrectionLine {
  line: number;
  external_id: string;
  unpaid: Unpaid;
  code: string;
}

/** The rows of `batchId` that ended unpaid, optionally only those whose reason code is one of `codes`. */
export async function unpaidRows(store: Pick<IntakeStore, 'rows'>, batchId: string, codes?: ReadonlySet<string>): Promise<{ row: RowRecord; unpaid: Unpaid; code: string }[]> {
  const out: { row: RowRecord; unpaid: Unpaid; code: string }[] = [];
  for await (const row of store.rows(batchId)) {
    const { reason, code } = resultReason({ ...row, errors: null, transaction_id: null, input_amount: null, input_currency: null, output_amount: null, output_currency: null, funded_at: null, recipient_name: null, settled_at: null, original_batch: null, original_line: null });
    const errorCode = row.errors[0]?.code ?? '';
    const found = unpaid({
      phase: row.phase, state: row.state, outcome: row.outcome, reason: reason || (row.errors[0]?.message ?? ''), code: code || errorCode,
      errorColumns: row.errors.map((e) => e.column).filter((c) => c !== ''), corridorColumns: corridorColumnsOf(row),
    });
    if (!found) continue;
    if (codes && !codes.has(code || errorCode)) continue;
    out.push({ row, unpaid: found, code: code || errorCode });
  }
  return out;
}

/** The columns the row's corridor requires, from its request (or its fields as read); null when no corridor matches. */
function corridorColumnsOf(row: RowRecord): readonly string[] | null {
  const query = row.request
    ? { country: row.request.recipient.country_code ?? '', type: row.request.type, input: row.request.input_currency_code, output: row.request.output_currency_code }
    : {
      country: (row.fields?.recipient_country_code ?? '').toUpperCase(), type: (row.fields?.type ?? '').toLowerCase(),
      input: (row.fields?.input_currency_code ?? '').toUpperCase(), output: (row.fields?.output_currency_code ?? '').toUpperCase(),
    };
  return findCorridor(query)?.required ?? null;
}

/** The corrections file's text (CSV, header first), and what is in it. */
export async function correctionsFile(store: Pick<IntakeStore, 'rows' | 'batch'>, batchId: string, codes?: ReadonlySet<string>): Promise<{ text: string; lines: CorrectionLine[] }> {
  const rows = await unpaidRows(store, batchId, codes);
  const records = rows.map(({ row, unpaid: why }) => {
    const values: Record<string, string | undefined> = { ...valuesOf(row) };
    const original = values.external_id;
    values.external_id = original ? correctionExternalId(original) : '';
    values.original_batch = batchId;
    values.original_line = String(row.line);
    values.unpaid_state = why.state;
    values.unpaid_reason = why.reason;
    values.to_fix = why.toFix;
    // Exactly as sent: this file comes back as a batch, so the spreadsheet guard of the result files (a leading ')
    // would become part of the payout's external_id and names at the service.
    return CORRECTION_COLUMNS.map((column) => values[column] ?? '');
  });
  const text = stringify([CORRECTION_COLUMNS as string[], ...records], { record_delimiter: '\n' });
  return { text, lines: rows.map(({ row, unpaid: why, code }) => ({ line: row.line, external_id: row.external_id ?? '', unpaid: why, code })) };
}
