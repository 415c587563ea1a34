/**
 * One piece of a CSV batch file (whole records, see record-boundaries.ts),
 * parsed (segment-records.ts) and checked by the row rules on its own: what a worker thread does.
 * The answer is columns, not an object per row, so that it crosses threads
 * cheaply: lines and the fingerprints for the rules across rows in typed
 * arrays, the issues found, the totals; and, when the caller keeps the rows
 * (intake stores them), what it stores of each. Pure.
 */
import type { Issue } from '../validate/issue.js';
import type { RowFields } from '../validate/fields.js';
import type { RowRuleOptions, RowVerdict } from '../validate/row-rules.js';
import { PRINTS_PER_ROW, rowPrints } from '../validate/batch-rules.js';
import type { ColumnPlan } from './columns.js';
import { rowBuilder } from './columns.js';
import type { RowChecked } from './check-rows.js';
import { checkRow } from './check-rows.js';
import type { Delimiter } from './delimiter.js';
import type { LineEnd } from './record-boundaries.js';
import type { FileErrorCode } from './file-error.js';
import { BatchFileError } from './file-error.js';
import type { SegmentRecord } from './segment-records.js';
import { segmentRecords } from './segment-records.js';
import { countLines } from './encoding.js';
import { readRequest } from './request-text.js';

export interface SegmentTask {
  index: number;
  text: string;
  /** The line the segment's first character is on. */
  startLine: number;
  delimiter: Delimiter;
  /** The file's line end, which ends every record (csv-parse takes the first line's). */
  lineEnd: LineEnd;
  columns: ColumnPlan;
  rules: RowRuleOptions;
  maxRowCharacters: number;
  /** Keep what intake stores of each row (validation alone needs only counts and issues). */
  keepRows: boolean;
}

/** What intake stores of each row, by row of the segment. */
export interface KeptRows {
  externalIds: (string | null)[];
  /** Minor units and currency of a row whose amount could be read, valid or not (for a manifest's totals). */
  amounts: (string | null)[];
  currencies: (string | null)[];
  /** The payout request of a valid row, as JSON, its input currency and its recipient's name. */
  requests: (string | null)[];
  inputCurrencies: (string | null)[];
  recipientNames: (string | null)[];
  /** The recipient account it pays (StoredRequest.recipientKey). */
  recipientKeys: (string | null)[];
  /** The corridor's country and payout type, for the corridor summary. */
  countries: (string | null)[];
  types: (string | null)[];
  /** The row's values as read, as JSON: kept for a row with no request. */
  fields: (string | null)[];
  /** A correction's original: "batch line", "malformed", or null. */
  origins: (string | null)[];
}

export interface CheckedSegment {
  index: number;
  rows: number;
  lines: Int32Array;
  /** PRINTS_PER_ROW numbers per row (see rowPrints). */
  prints: Uint32Array;
  valid: Uint8Array;
  issues: { at: number; severity: 'error' | 'warning'; issue: Issue }[];
  /** Output currency to the sum of the valid rows, in minor units. */
  validTotals: [string, string][];
  /** Each valid row's amount in minor units (0 for a row not valid) and its currency, as an index into `amountCurrencies`: for the outliers. */
  validAmounts: BigInt64Array;
  amountCurrencyAt: Uint16Array;
  amountCurrencies: string[];
  kept: KeptRows | null;
  /** What ends the file as unreadable, found in this segment after its rows above. */
  error: { code: FileErrorCode; line: number | null; message: string } | null;
}

/** A segment's rows as they are checked, gathered as a CheckedSegment's columns. */
export class CheckedRows {
  rows = 0;
  private lines: Int32Array;
  private prints: Uint32Array;
  private valid: Uint8Array;
  private validAmounts: BigInt64Array;
  private amountCurrencyAt: Uint16Array;
  private readonly amountCurrencies = new Map<string, number>();
  private readonly issues: CheckedSegment['issues'] = [];
  private readonly kept: KeptRows | null;
  private readonly totals = new Map<string, bigint>();

  /** `most`: the number of rows to come, at most (more are taken, at the cost of copying what is gathered). */
  constructor(most: number, keepRows: boolean) {
    this.lines = new Int32Array(most);
    this.prints = new Uint32Array(most * PRINTS_PER_ROW);
    this.valid = new Uint8Array(most);
    this.validAmounts = new BigInt64Array(most);
    this.amountCurrencyAt = new Uint16Array(most);
    this.kept = keepRows ? { externalIds: [], amounts: [], currencies: [], requests: [], inputCurrencies: [], recipientNames: [], recipientKeys: [], countries: [], types: [], fields: [], origins: [] } : null;
  }

  add(line: number, checked: RowChecked, verdict: RowVerdict): void {
    const rows = this.rows;
    if (rows === this.lines.length) this.grow();
    this.lines[rows] = line;
    rowPrints(verdict.values, verdict.amountMinor, verdict.senderFingerprint, this.prints, rows * PRINTS_PER_ROW);
    this.valid[rows] = checked.valid ? 1 : 0;
    if (checked.valid && checked.amount) {
      const { currency, minor } = checked.amount;
      this.totals.set(currency, (this.totals.get(currency) ?? 0n) + minor);
      this.validAmounts[rows] = minor;
      if (!this.amountCurrencies.has(currency)) this.amountCurrencies.set(currency, this.amountCurrencies.size);
      this.amountCurrencyAt[rows] = this.amountCurrencies.get(currency) as number;
    }
    for (const issue of checked.errors) this.issues.push({ at: rows, severity: 'error', issue });
    for (const issue of checked.warnings) this.issues.push({ at: rows, severity: 'warning', issue });
    if (this.kept) keep(this.kept, checked);
    this.rows += 1;
  }

  private grow(): void {
    const size = Math.max(16, this.lines.length * 2);
    const grown = <T extends Int32Array | Uint32Array | Uint8Array | BigInt64Array | Uint16Array>(from: T, make: (n: number) => T, width = 1): T => {
      const to = make(size * width);
      to.set(from as never);
      return to;
    };
    this.lines = grown(this.lines, (n) => new Int32Array(n));
    this.prints = grown(this.prints, (n) => new Uint32Array(n), PRINTS_PER_ROW);
    this.valid = grown(this.valid, (n) => new Uint8Array(n));
    this.validAmounts = grown(this.validAmounts, (n) => new BigInt64Array(n));
    this.amountCurrencyAt = grown(this.amountCurrencyAt, (n) => new Uint16Array(n));
  }

  result(index: number, failure: unknown): CheckedSegment {
    let error: CheckedSegment['error'] = null;
    if (failure !== null) {
      if (!(failure instanceof BatchFileError)) throw failure;
      error = { code: failure.code, line: failure.line, message: failure.message };
    }
    const rows = this.rows;
    return { index, rows, lines: this.lines.subarray(0, rows), prints: this.prints.subarray(0, rows * PRINTS_PER_ROW), valid: this.valid.subarray(0, rows), issues: this.issues,
      validTotals: [...this.totals].map(([currency, minor]) => [currency, minor.toString()]),
      validAmounts: this.validAmounts.subarray(0, rows), amountCurrencyAt: this.amountCurrencyAt.subarray(0, rows), amountCurrencies: [...this.amountCurrencies.keys()], kept: this.kept, error };
  }
}

function keep(kept: KeptRows, checked: RowChecked): void {
  const origin = checked.origin();
  kept.externalIds.push(checked.externalId);
  kept.amounts.push(checked.amount ? checked.amount.minor.toString() : null);
  kept.currencies.push(checked.amount ? checked.amount.currency : null);
  const stored = checked.valid && origin !== 'malformed' ? checked.stored() : null;
  kept.requests.push(stored?.json ?? null);
  kept.inputCurrencies.push(stored?.inputCurrency ?? null);
  kept.recipientNames.push(stored?.recipientName ?? null);
  kept.recipientKeys.push(stored?.recipientKey ?? null);
  kept.countries.push(stored?.country ?? null);
  kept.types.push(stored?.type ?? null);
  kept.fields.push(stored === null ? JSON.stringify(checked.fields()) : null);
  kept.origins.push(origin === null || origin === 'malformed' ? origin : `${origin.batch} ${origin.line}`);
}

export function checkSegment(task: SegmentTask): CheckedSegment {
  let failure: unknown = null;
  const build = rowBuilder(task.columns);
  // Sized for the piece's lines; a piece has no more records than lines.
  const checkedRows = new CheckedRows(countLines(task.text) + 1, task.keepRows);
  const width = task.columns.fields.length;
  const records = segmentRecords(task.text, task.startLine, task);
  for (;;) {
    let next: IteratorResult<SegmentRecord>;
    try {
      next = records.next();
    } catch (error) {
      failure = error;
      break;
    }
    if (next.done) break;
    const { record, line, endLine } = next.value;
    if (record.length !== width) {
      // Every row is held to the header, as csv-parse holds every record to the first.
      failure = new BatchFileError('field_count', endLine, `line ${endLine}: the row has ${record.length} fields, the header has ${width}`);
      break;
    }
    if (record.every((cell) => cell.trim() === '')) continue; // a row of empty cells, as spreadsheets leave at the end
    const { checked, verdict } = checkRow(task.columns, task.rules, { line, fields: build(record) });
    checkedRows.add(line, checked, verdict);
  }
  return checkedRows.result(task.index, failure);
}

/** Row `at` of a segment whose rows were kept, as a consumer of checked rows sees it. */
export function keptRow(segment: CheckedSegment, at: number, errors: Issue[], warnings: Issue[]): RowChecked {
  const kept = segment.kept as KeptRows;
  const line = segment.lines[at] as number;
  const minor = kept.amounts[at];
  const currency = kept.currencies[at];
  const request = kept.requests[at];
  const origin = kept.origins[at];
  const fields = kept.fields[at];
  return {
    line, errors, warnings,
    externalId: kept.externalIds[at] ?? null,
    valid: segment.valid[at] === 1,
    amount: minor !== null && minor !== undefined && currency ? { minor: BigInt(minor), currency } : null,
    request: () => {
      if (!request) throw new Error(`line ${line} is not valid: it has no request`);
      return readRequest(request);
    },
    stored: () => {
      if (!request || !minor || !currency) throw new Error(`line ${line} is not valid: it has no request`);
      return { json: request, inputCurrency: kept.inputCurrencies[at] as string, outputAmount: minor, outputCurrency: currency, recipientName: kept.recipientNames[at] ?? null,
        recipientKey: kept.recipientKeys[at] ?? null, country: kept.countries[at] ?? null, type: kept.types[at] as string };
    },
    origin: () => {
      if (origin === null || origin === undefined || origin === 'malformed') return origin ?? null;
      const [batch, number] = origin.split(' ') as [string, string];
      return { batch, line: Number(number) };
    },
    fields: () => (fields ? (JSON.parse(fields) as RowFields) : {}),
  };
}
