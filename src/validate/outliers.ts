/**
 * Rows far above a batch's usual amounts, warned of before anyone signs: a row
 * over 10 times the median of its currency's rows in the batch, or over
 * batch.warn_row_amount for its currency. A warning, not an error: such a row
 * may be meant (a 99,999,999.99 GBP row typed in a spreadsheet usually is not).
 * Pure; memory stays bounded: 8 bytes per row for the median, and the largest
 * rows of each currency kept with their line and external_id.
 */
import { formatMoney } from './money.js';

/** A row is an outlier when over this many times its currency's median in the batch. */
export const TIMES_MEDIAN = 10n;
/** The largest rows kept per currency, and so the most outliers listed per currency. */
export const OUTLIERS_LISTED = 50;

export interface Outlier {
  line: number;
  external_id: string | null;
  currency: string;
  /** Minor units. */
  amount: string;
  /** The batch's median for the currency, minor units. */
  median: string;
  /** Why: over 10 times the median, over batch.warn_row_amount, or both. */
  because: ('times_median' | 'warn_row_amount')[];
  /** For people, in major units. */
  message: string;
}

interface Kept {
  line: number;
  externalId: string | null;
  minor: bigint;
}

class CurrencyAmounts {
  amounts = new BigInt64Array(1024);
  count = 0;
  /** The largest rows, largest first. */
  readonly largest: Kept[] = [];

  add(row: Kept): void {
    if (this.count === this.amounts.length) {
      const grown = new BigInt64Array(this.amounts.length * 2);
      grown.set(this.amounts);
      this.amounts = grown;
    }
    this.amounts[this.count++] = row.minor;
    const last = this.largest[this.largest.length - 1];
    if (this.largest.length === OUTLIERS_LISTED && last && last.minor >= row.minor) return;
    const at = this.largest.findIndex((k) => k.minor < row.minor);
    this.largest.splice(at === -1 ? this.largest.length : at, 0, row);
    if (this.largest.length > OUTLIERS_LISTED) this.largest.pop();
  }

  /** Twice the median (the sum of the two middle amounts, or twice the middle one): exact in integers. */
  twiceMedian(): bigint {
    const sorted = this.amounts.slice(0, this.count).sort();
    const middle = Math.floor(this.count / 2);
    return this.count % 2 === 1 ? 2n * (sorted[middle] as bigint) : (sorted[middle - 1] as bigint) + (sorted[middle] as bigint);
  }
}

/** Collects the valid rows' amounts as they are read; `outliers()` once the batch is whole. */
export class OutlierWatch {
  private readonly byCurrency = new Map<string, CurrencyAmounts>();

  add(line: number, externalId: string | null, currency: string, minor: bigint): void {
    let amounts = this.byCurrency.get(currency);
    if (!amounts) this.byCurrency.set(currency, (amounts = new CurrencyAmounts()));
    amounts.add({ line, externalId, minor });
  }

  /** The outliers by currency then amount, largest first; `warnAt`: batch.warn_row_amount in minor units. */
  outliers(warnAt: Readonly<Record<string, bigint>>): Outlier[] {
    const found: Outlier[] = [];
    for (const [currency, amounts] of [...this.byCurrency.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const twiceMedian = amounts.twiceMedian();
      const limit = warnAt[currency];
      for (const row of amounts.largest) {
        const because: Outlier['because'] = [];
        // row > 10 × median, written without halving: 2 × row > 10 × (2 × median).
        if (2n * row.minor > TIMES_MEDIAN * twiceMedian) because.push('times_median');
        if (limit !== undefined && row.minor > limit) because.push('warn_row_amount');
        if (because.length === 0) continue;
        found.push(outlier(row, currency, twiceMedian / 2n, because, limit));
      }
    }
    return found;
  }
}

function outlier(row: Kept, currency: string, median: bigint, because: Outlier['because'], limit: bigint | undefined): Outlier {
  const words = because.map((b) => (b === 'times_median'
    ? `over ${TIMES_MEDIAN} times the batch's median ${formatMoney(median, currency)}`
    : `over batch.warn_row_amount ${formatMoney(limit ?? 0n, currency)}`));
  return {
    line: row.line, external_id: row.externalId, currency, amount: row.minor.toString(), median: median.toString(), because,
    message: `${formatMoney(row.minor, currency)} is ${words.join(' and ')}: check it before it is approved`,
  };
}
