/**
 * What an approver signs: exactly what will be paid. The deployment (this
 * database's random identity), the batch, the SHA-256 of
 * its file, the rows to send (their number and a digest of each row as it will
 * be sent), the total per output currency, the most that may
 * be funded per input currency (the ceiling, which becomes the batch's budget),
 * and until when the approval holds. Its bytes are canonical (keys sorted, no
 * spaces), so that the same statement always has the same signature. Pure.
 */

export interface Statement {
  /** This database's random identity (shown by preview): the same batch id in another workspace is another batch. */
  deployment: string;
  batch: string;
  file_sha256: string;
  rows: number;
  /** SHA-256 over the rows to send, each exactly as it will be sent: a row edited in the database no longer matches. */
  rows_sha256: string;
  /**
   * SHA-256 over the batch's possible duplicates and the allowances made for them (duplicates-digest.ts); absent when
   * it has none, so that a statement signed before this field existed still verifies for such a batch.
   */
  duplicates_sha256?: string;
  /** Output currency to the total of the rows to send, minor units. */
  totals: Record<string, string>;
  /** Input currency to the most that may be funded, minor units. */
  ceiling: Record<string, string>;
  /** ISO 8601: the approval is void after this. */
  expires_at: string;
}

const sorted = (record: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/** v2 names the deployment; a v1 statement (none) no longer verifies: its batch is held, to be submitted and approved again. */
export const STATEMENT_FORMAT = 'paybatch approval v2';

/** The statement as the bytes that are signed. */
export function statementBytes(statement: Statement): Buffer {
  const canonical = {
    batch: statement.batch,
    deployment: statement.deployment,
    ceiling: sorted(statement.ceiling),
    // Only when present: the bytes of a statement of a batch with no possible duplicates are those signed before.
    ...(statement.duplicates_sha256 === undefined ? {} : { duplicates_sha256: statement.duplicates_sha256 }),
    expires_at: statement.expires_at,
    file_sha256: statement.file_sha256,
    rows: statement.rows,
    rows_sha256: statement.rows_sha256,
    totals: sorted(statement.totals),
  };
  return Buffer.from(`${STATEMENT_FORMAT}\n${JSON.stringify(canonical)}`, 'utf8');
}

/** The fields that differ, for the reason a batch is held. */
export function statementDifferences(signed: Statement, now: Statement): string[] {
  const differences: string[] = [];
  const compare = (field: string, x: unknown, y: unknown): void => {
    if (JSON.stringify(x) !== JSON.stringify(y)) differences.push(`${field}: approved ${JSON.stringify(x)}, now ${JSON.stringify(y)}`);
  };
  compare('deployment', signed.deployment, now.deployment);
  compare('batch', signed.batch, now.batch);
  compare('file_sha256', signed.file_sha256, now.file_sha256);
  compare('rows', signed.rows, now.rows);
  compare('rows_sha256', signed.rows_sha256, now.rows_sha256);
  compare('totals', sorted(signed.totals), sorted(now.totals));
  compare('duplicates_sha256', signed.duplicates_sha256 ?? null, now.duplicates_sha256 ?? null);
  return differences;
}

const isMinorMap = (v: unknown): v is Record<string, string> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.entries(v).every(([c, n]) => /^[A-Z]{3}$/.test(c) && typeof n === 'string' && /^\d{1,30}$/.test(n));

/** A statement from JSON (a downloaded file, a form field), or what is wrong with it. */
export function parseStatement(text: string): Statement | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  if (typeof value !== 'object' || value === null) return 'not a statement';
  const s = value as Record<string, unknown>;
  if (typeof s.deployment !== 'string') return `a statement names its deployment (${STATEMENT_FORMAT}): sign the statement shown now`;
  if (typeof s.batch !== 'string' || typeof s.file_sha256 !== 'string' || typeof s.rows_sha256 !== 'string' || typeof s.expires_at !== 'string') return 'a statement has batch, file_sha256, rows_sha256 and expires_at';
  if (typeof s.rows !== 'number' || !Number.isInteger(s.rows) || s.rows < 0) return 'rows must be a whole number';
  if (!isMinorMap(s.totals) || !isMinorMap(s.ceiling)) return 'totals and ceiling map currency codes to minor units';
  if (s.duplicates_sha256 !== undefined && typeof s.duplicates_sha256 !== 'string') return 'duplicates_sha256, when present, is a string';
  return {
    deployment: s.deployment, batch: s.batch, file_sha256: s.file_sha256, rows: s.rows, rows_sha256: s.rows_sha256,
    ...(s.duplicates_sha256 === undefined ? {} : { duplicates_sha256: s.duplicates_sha256 }), totals: s.totals, ceiling: s.ceiling, expires_at: s.expires_at,
  };
}
