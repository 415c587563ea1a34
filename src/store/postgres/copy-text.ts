/**
 * Values in the text format of PostgreSQL's COPY ... FROM STDIN: columns split
 * by a tab, each row ended by a newline, NULL written \N, and a backslash
 * starting an escape. A value is user text (names, references, JSON), so every
 * backslash in it is doubled and every tab, newline and carriage return written
 * as \t, \n and \r: no value can split a column or a row, end the data (a line
 * `\.`), or be read as NULL (the text `\N` arrives as `\\N`). Every other
 * character goes as it is, as UTF-8 (the connection's encoding).
 */
export type CopyValue = string | number | null;

const SPECIAL = /[\\\t\n\r]/;
const SPECIALS = /[\\\t\n\r]/g;
const ESCAPE: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

export function copyField(value: CopyValue): string {
  if (value === null) return '\\N';
  if (typeof value === 'number') {
    // Only integer columns take numbers: anything else would be stored as whatever String() made of it.
    if (!Number.isSafeInteger(value)) throw new RangeError(`COPY: ${value} is not an integer`);
    return String(value);
  }
  // The test first: most values hold none of the four, and are kept as they are.
  return SPECIAL.test(value) ? value.replace(SPECIALS, (c) => ESCAPE[c] as string) : value;
}

/** One row: its fields in the order of the COPY's column list, ended by its newline. */
export function copyLine(values: readonly CopyValue[]): string {
  return `${values.map(copyField).join('\t')}\n`;
}
