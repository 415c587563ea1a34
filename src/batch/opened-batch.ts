/**
 * A batch file once opened, whatever its format (its columns, its rows, its
 * hash), and the options it is read with. CSV (reader.ts) and spreadsheets
 * (xlsx-reader.ts) both make one; the types live apart from either so that
 * neither reader imports the other for them.
 */
import type { RowFields } from '../validate/fields.js';
import type { FieldIssue, Issue } from '../validate/issue.js';
import type { ColumnPlan } from './columns.js';
import type { Delimiter } from './delimiter.js';
import type { MappingOptions } from './iso20022/pain001-fields.js';

export interface ReaderOptions {
  delimiter: 'auto' | Delimiter;
  columnMapping: Readonly<Record<string, string>>;
  maxFileBytes: number;
  /** A spreadsheet's parts: unpacked size over packed size, at most. */
  maxCompressionRatio: number;
  /** A spreadsheet's shared strings: the bytes they may take in memory. */
  maxSharedStringsBytes: number;
  maxRowCharacters: number;
  maxColumns: number;
  /** Bytes of the fingerprints for the rules across rows kept in memory before the scratch file (fingerprint-spill.ts). */
  scratchAfterBytes: number;
  /** A CSV file or pain.001 this large or larger is checked on every core (parallel-check.ts, iso20022/pain001-parallel.ts). */
  parallelMinBytes: number;
  /** A spreadsheet's sheet, by name; its first visible sheet when absent. */
  sheet?: string;
  /** How a spreadsheet's number cells are written for output_amount, so that the row rules read them as they read text. */
  decimalSeparator?: '.' | ',';
  /** How an ISO 20022 pain.001 file (.xml) becomes rows: what it does not carry. */
  iso20022?: MappingOptions;
}

export interface BatchRow {
  /** The line the row starts on; the header is line 1. In a spreadsheet, the row's number in its sheet. */
  line: number;
  fields: RowFields;
  /** What the reader could not map into fields (a pain.001's NOTPROVIDED reference): errors of the row. */
  issues?: FieldIssue[];
}

export interface OpenedBatch {
  /** CSV only; null for a spreadsheet. */
  delimiter: Delimiter | null;
  /** The sheet read, for a spreadsheet. */
  sheet?: string;
  columns: ColumnPlan;
  rows: AsyncGenerator<BatchRow>;
  /** SHA-256 of the file's bytes, once `rows` has been read to the end. */
  sha256(): string;
  /** A spreadsheet's issues with their cell (Payouts!C7) added; CSV issues need nothing more than their line. */
  place?(issue: Issue): Issue;
}
