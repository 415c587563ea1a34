/**
 * The rows an approval covers, one digest each, so that a row can be checked
 * cheaply at the moment it is claimed for its create and for its funding (one
 * SHA-256 a row). The statement signs `rows_sha256`, the SHA-256 over every
 * row's `line TAB canonical request NEWLINE` in line order; the set below is
 * made in the same pass over the same bytes, and is kept only once that hash
 * matched a verified signature: a row edited after approval (another amount,
 * recipient, any field sent) or inserted (a line the statement never had) is
 * not in it. Pure.
 */
import { createHash } from 'node:crypto';
import type { PayoutRequest } from '../api/payout-request.js';

/** JSON with keys sorted at every level: the same request always hashes the same. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A row as `rows_sha256` hashes it. */
export const rowBytes = (line: number, request: PayoutRequest): string => `${line}\t${canonical(request)}\n`;

/**
 * 16 bytes of the row's SHA-256: finding another request with the same 128 bits is out of reach, and a million rows
 * keep 16 MB, not the 100 MB or more a set of hex strings would.
 */
const DIGEST_BYTES = 16;
const digestOf = (bytes: string): Buffer => createHash('sha256').update(bytes).digest().subarray(0, DIGEST_BYTES);

export class SignedRows {
  private constructor(private readonly lines: Uint32Array, private readonly digests: Buffer) {}

  get size(): number {
    return this.lines.length;
  }

  /** Whether this line, with exactly this request, is one of the rows signed for. */
  covers(line: number, request: PayoutRequest): boolean {
    let low = 0;
    let high = this.lines.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const at = this.lines[middle] as number;
      if (at === line) return digestOf(rowBytes(line, request)).equals(this.digests.subarray(middle * DIGEST_BYTES, (middle + 1) * DIGEST_BYTES));
      if (at < line) low = middle + 1;
      else high = middle - 1;
    }
    return false;
  }

  /** Collects the rows in line order (as the store gives them), feeding the same bytes to the statement's hash. */
  static collector(): { add(line: number, request: PayoutRequest, into: { update(bytes: string): unknown }): void; done(): SignedRows } {
    const lines: number[] = [];
    const digests: Buffer[] = [];
    return {
      add(line, request, into) {
        const bytes = rowBytes(line, request);
        into.update(bytes);
        if (lines.length > 0 && line <= (lines[lines.length - 1] as number)) throw new Error(`rows out of line order at line ${line}`);
        lines.push(line);
        digests.push(digestOf(bytes));
      },
      done: () => new SignedRows(Uint32Array.from(lines), Buffer.concat(digests)),
    };
  }
}
