/**
 * Matching a file's header row to the batch columns. Matching ignores case,
 * surrounding spaces, and spaces versus underscores; a column mapping from the
 * configuration maps a user's own headers ("Beneficiary IBAN") to batch columns.
 */
import type { Field, RowFields } from '../validate/fields.js';
import { AMOUNT_COLUMNS, FIELDS, REQUIRED_COLUMNS } from '../validate/fields.js';
import type { Issue } from '../validate/issue.js';
import { BatchFileError } from './file-error.js';

export interface ColumnPlan {
  /** For each position in a row, the batch column it holds, or null when ignored. */
  fields: (Field | null)[];
  /** The file's own name of each batch column it has, for messages. */
  labels: Partial<Record<Field, string>>;
  warnings: Issue[];
}

/**
 * A function building a row's fields from a record, made for one file's column
 * plan: an object literal with fixed keys is much cheaper per row than keyed
 * stores, and gives every row one shape. The keys come only from the canonical
 * column list (never from the file), and positions are numbers.
 */
export function rowBuilder(plan: ColumnPlan): (record: readonly string[]) => RowFields {
  const entries = plan.fields.flatMap((field, index) => (field && KNOWN.has(field) ? [`${field}: v(r[${index}])`] : []));
  const build = new Function('v', `return (r) => ({ ${entries.join(', ')} });`) as (v: (x: string | undefined) => string | undefined) => (r: readonly string[]) => RowFields;
  return build((x) => {
    const value = x?.trim();
    return value === '' ? undefined : value;
  });
}

export const normaliseHeader = (text: string): string => text.trim().toLowerCase().replace(/[\s_]+/g, '_');

const KNOWN: ReadonlySet<string> = new Set(FIELDS);
const UNKNOWN_LISTED = 10;

export function planColumns(header: readonly string[], mapping: Readonly<Record<string, string>>, maxColumns: number): ColumnPlan {
  if (header.length > maxColumns) {
    throw new BatchFileError('too_many_columns', 1, `the header has ${header.length} columns; at most ${maxColumns} are accepted (batch.max_columns)`);
  }
  const mapped = new Map(Object.entries(mapping).map(([from, to]) => [normaliseHeader(from), to]));
  const fields: (Field | null)[] = [];
  const labels: Partial<Record<Field, string>> = {};
  const positions = new Map<Field, number>();
  const unknown: string[] = [];
  header.forEach((raw, index) => {
    const name = normaliseHeader(raw);
    const field = (mapped.get(name) ?? name) as Field;
    if (name === '' || !KNOWN.has(field)) {
      if (name !== '') unknown.push(raw.trim());
      fields.push(null);
      return;
    }
    const earlier = positions.get(field);
    if (earlier !== undefined) {
      throw new BatchFileError('duplicate_column', 1,
        `column ${field} appears twice: column ${earlier + 1} ("${header[earlier]?.trim()}") and column ${index + 1} ("${raw.trim()}")`);
    }
    positions.set(field, index);
    labels[field] = raw.trim();
    fields.push(field);
  });
  const missing = REQUIRED_COLUMNS.filter((f) => !positions.has(f));
  if (!AMOUNT_COLUMNS.some((f) => positions.has(f))) missing.push('output_amount');
  if (missing.length > 0) {
    const amountNote = missing.includes('output_amount') ? ' (the amount goes in output_amount or output_amount_in_cents)' : '';
    throw new BatchFileError('missing_columns', 1, `the header lacks required columns: ${missing.join(', ')}${amountNote}`);
  }
  return { fields, labels, warnings: unknownColumnWarnings(unknown) };
}

function unknownColumnWarnings(unknown: readonly string[]): Issue[] {
  const warning = (column: string, message: string): Issue => ({ line: 1, column, code: 'unknown_column', message });
  if (unknown.length <= UNKNOWN_LISTED) {
    return unknown.map((name) => warning(name, `column "${name}" is not a batch column and is ignored (map it with batch.column_mapping if it should be one)`));
  }
  const listed = unknown.slice(0, UNKNOWN_LISTED).map((n) => `"${n}"`).join(', ');
  return [warning(unknown[0] as string, `${unknown.length} columns are not batch columns and are ignored: ${listed} and ${unknown.length - UNKNOWN_LISTED} more`)];
}
