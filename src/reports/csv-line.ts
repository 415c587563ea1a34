/**
 * One CSV record as text, written by hand: the reconciliation writes one for
 * each of a million rows, and csv-stringify spent most of its time there
 * normalising its options again for every record. The bytes are csv-stringify's
 * with a one-character delimiter, `"` to quote and to escape, records ended by
 * `\n`, and `quote_record_delimiter` (test/reports/csv-line.test.ts holds it to
 * that on random fields): a field is quoted when it holds the delimiter, a
 * quote, `\n` or `\r` (RFC 4180: a bare carriage return, left unquoted, ends
 * the record in many readers), its quotes doubled; an empty field is empty.
 */

const NEEDS_QUOTES: Readonly<Record<',' | ';', RegExp>> = { ',': /[",\n\r]/, ';': /[";\n\r]/ };

/** The fields as one record, ended by `\n`. */
export function csvLine(fields: readonly string[], delimiter: ',' | ';'): string {
  const quoting = NEEDS_QUOTES[delimiter];
  let line = '';
  for (let i = 0; i < fields.length; i += 1) {
    const field = fields[i] as string;
    if (i > 0) line += delimiter;
    line += quoting.test(field) ? `"${field.replaceAll('"', '""')}"` : field;
  }
  return `${line}\n`;
}
