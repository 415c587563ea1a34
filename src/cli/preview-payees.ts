/** The preview's rows as text, a page at a time, and the amounts to check before signing. Pure. */
import type { PreviewRow } from '../engine/preview-rows.js';
import type { Outlier } from '../validate/outliers.js';

/** Rows per page of `paybatch preview`'s text. */
export const PREVIEW_PAGE_ROWS = 25;

export interface PayeePage {
  /** 1 for the first page. */
  page: number;
  /** Every row, one page. */
  all: boolean;
}

function table(rows: readonly PreviewRow[]): string[] {
  const header = ['LINE', 'EXTERNAL_ID', 'RECIPIENT', 'ACCOUNT', 'AMOUNT', 'CORRIDOR'];
  const cells = rows.map((r) => [String(r.line), r.external_id, r.recipient_name ?? '', r.account, r.amount_text, r.corridor]);
  const widths = header.map((h, c) => Math.min(32, Math.max(h.length, ...cells.map((row) => (row[c] as string).length))));
  const line = (row: readonly string[]): string => `    ${row.map((cell, c) => (c === 0 || c === 4 ? cell.padStart(widths[c] as number) : cell.padEnd(widths[c] as number))).join('  ').trimEnd()}`;
  return [line(header), ...cells.map(line)];
}

/** "rows to send, 1 to 25 of 30" with the table and how to see the others. */
export function payeeLines(subject: string, payees: readonly PreviewRow[], at: PayeePage): string[] {
  if (payees.length === 0) return ['  no row to send'];
  if (at.all) return [`  rows to send, all ${payees.length}:`, ...table(payees)];
  const pages = Math.ceil(payees.length / PREVIEW_PAGE_ROWS);
  const page = Math.min(Math.max(1, at.page), pages);
  const from = (page - 1) * PREVIEW_PAGE_ROWS;
  const shown = payees.slice(from, from + PREVIEW_PAGE_ROWS);
  const lines = [`  rows to send, ${from + 1} to ${from + shown.length} of ${payees.length} (page ${page} of ${pages}):`, ...table(shown)];
  if (pages > 1) {
    const next = page < pages ? `--page ${page + 1} for the next ${Math.min(PREVIEW_PAGE_ROWS, payees.length - from - shown.length)}, ` : '';
    lines.push(`    more: paybatch preview ${subject} ${next}--all for every row, --json for every row as JSON`);
  }
  return lines;
}

export function outlierWarningLines(outliers: readonly Outlier[]): string[] {
  if (outliers.length === 0) return [];
  return [`  WARNING: amounts to check before anyone approves (${outliers.length}):`, ...outliers.map((o) => `    line ${o.line}  ${o.external_id ?? ''}  ${o.message}`)];
}
