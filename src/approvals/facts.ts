/**
 * What a batch is, for its approval: the deployment it is in, the rows accepted to be sent, each as it
 * will be sent (their digest), the total and the largest row per output
 * currency, and an estimate of the funding per input currency. Recomputed from
 * the store whenever an approval is verified, so that a row edited in the
 * database no longer matches what was signed.
 */
import { createHash } from 'node:crypto';
import type { PayoutRequest } from '../api/payout-request.js';
import { currencyDecimals } from '../validate/money.js';
import { duplicatesDigest, unallowedHolds } from './duplicates-digest.js';
import type { SignedDuplicate } from './duplicates-digest.js';
import { SignedRows } from './signed-rows.js';
import type { Statement } from './statement.js';
import type { BatchFigures } from './verify.js';

export interface ApprovalFacts {
  expected: Omit<Statement, 'ceiling' | 'expires_at'>;
  figures: BatchFigures;
  /** Input currency to the estimated funding (minor units); `exact` when every row of it is paid in the same currency or at a configured rate. */
  estimate: Map<string, { minor: bigint; exact: boolean; unknownRows: number }>;
  /** Each row's digest, from the same bytes as `rows_sha256`: kept by the gate once a signature over it verified. */
  rows: SignedRows;
  /** The lines held as possible duplicates with no allowance, as signed over by `duplicates_sha256`: never sent under it. */
  unallowedHolds: ReadonlySet<number>;
}

/** "0.7912" as a fraction n / d, exactly. */
function fraction(rate: string): { n: bigint; d: bigint } {
  const [whole, part = ''] = rate.split('.');
  return { n: BigInt(`${whole}${part}`), d: 10n ** BigInt(part.length) };
}

/** [D9] The input amount of an output amount at a rate (output per input), rounded up to the input's minor unit. */
export function inputFor(outputMinor: bigint, outputCurrency: string, inputCurrency: string, rate: string): bigint {
  const { n, d } = fraction(rate);
  const shift = BigInt((currencyDecimals(inputCurrency) ?? 2) - (currencyDecimals(outputCurrency) ?? 2));
  const numerator = outputMinor * d * (shift >= 0n ? 10n ** shift : 1n);
  const denominator = n * (shift < 0n ? 10n ** -shift : 1n);
  return (numerator + denominator - 1n) / denominator;
}

export async function approvalFacts(batch: { id: string; sha256: string }, rows: AsyncIterable<{ line: number; request: PayoutRequest }>, rates: Readonly<Record<string, string>>, deployment: string,
  duplicates: readonly SignedDuplicate[] = []): Promise<ApprovalFacts> {
  const digest = createHash('sha256');
  const signed = SignedRows.collector();
  const totals = new Map<string, bigint>();
  const largestRow = new Map<string, bigint>();
  const estimate = new Map<string, { minor: bigint; exact: boolean; unknownRows: number }>();
  let count = 0;
  for await (const { line, request } of rows) {
    count += 1;
    signed.add(line, request, digest);
    const out = request.output_currency_code;
    const amount = BigInt(request.output_amount_in_cents);
    totals.set(out, (totals.get(out) ?? 0n) + amount);
    if (amount > (largestRow.get(out) ?? 0n)) largestRow.set(out, amount);
    const input = request.input_currency_code;
    const entry = estimate.get(input) ?? { minor: 0n, exact: true, unknownRows: 0 };
    const rate = rates[`${input}/${out}`];
    if (input === out) entry.minor += amount;
    else if (rate) entry.minor += inputFor(amount, out, input, rate);
    else entry.unknownRows += 1;
    if (input !== out) entry.exact = false;
    estimate.set(input, entry);
  }
  const record = (map: Map<string, bigint>): Record<string, string> => Object.fromEntries([...map.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, v.toString()]));
  const duplicatesSha256 = duplicatesDigest(duplicates);
  return {
    expected: {
      deployment, batch: batch.id, file_sha256: batch.sha256, rows: count, rows_sha256: digest.digest('hex'),
      ...(duplicatesSha256 === undefined ? {} : { duplicates_sha256: duplicatesSha256 }), totals: record(totals),
    },
    figures: { totals, largestRow },
    estimate,
    rows: signed.done(),
    unallowedHolds: unallowedHolds(duplicates),
  };
}

/** The ceiling proposed for approval: each input currency's estimate plus the margin, rounded up; null where it cannot be estimated. */
export function proposedCeiling(facts: ApprovalFacts, marginPercent: number): Map<string, bigint | null> {
  const ceiling = new Map<string, bigint | null>();
  const margin = BigInt(Math.round(marginPercent * 100));
  for (const [currency, { minor, unknownRows }] of facts.estimate) {
    ceiling.set(currency, unknownRows > 0 ? null : (minor * (10_000n + margin) + 9_999n) / 10_000n);
  }
  return ceiling;
}
