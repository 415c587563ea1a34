/** Rows far above the batch's usual amounts are warned of: over 10 times their currency's median, or over batch.warn_row_amount. */
import { describe, expect, it } from 'vitest';
import { OUTLIERS_LISTED, OutlierWatch } from '../../src/validate/outliers.js';

describe('outliers', () => {
  it('names a 99,999,999.99 GBP row among rows of a few hundred pounds', () => {
    const watch = new OutlierWatch();
    for (let line = 2; line < 12; line++) watch.add(line, `P-${line}`, 'GBP', 25_000n + BigInt(line));
    watch.add(12, 'P-12', 'GBP', 9_999_999_999n);
    const found = watch.outliers({});
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ line: 12, external_id: 'P-12', currency: 'GBP', amount: '9999999999', because: ['times_median'] });
    expect(found[0]?.message).toBe("99,999,999.99 GBP is over 10 times the batch's median 250.07 GBP: check it before it is approved");
  });

  it('takes each currency on its own: a large JPY amount is not an outlier beside GBP rows', () => {
    const watch = new OutlierWatch();
    for (let line = 2; line < 6; line++) watch.add(line, null, 'GBP', 10_000n);
    for (let line = 6; line < 10; line++) watch.add(line, null, 'JPY', 1_500_000n);
    expect(watch.outliers({})).toEqual([]);
  });

  it('is exactly 10 times: equal is not over, one minor unit more is', () => {
    const watch = new OutlierWatch();
    watch.add(2, 'A', 'USD', 100n);
    watch.add(3, 'B', 'USD', 100n);
    watch.add(4, 'C', 'USD', 1000n);
    expect(watch.outliers({})).toEqual([]);
    const more = new OutlierWatch();
    more.add(2, 'A', 'USD', 100n);
    more.add(3, 'B', 'USD', 100n);
    more.add(4, 'C', 'USD', 1001n);
    expect(more.outliers({}).map((o) => o.line)).toEqual([4]);
  });

  it('warns of a row over batch.warn_row_amount even when the batch has no median to be far from', () => {
    const watch = new OutlierWatch();
    watch.add(2, 'ONLY', 'GBP', 6_000_000n);
    const found = watch.outliers({ GBP: 5_000_000n });
    expect(found[0]).toMatchObject({ line: 2, because: ['warn_row_amount'] });
    expect(found[0]?.message).toBe('60,000.00 GBP is over batch.warn_row_amount 50,000.00 GBP: check it before it is approved');
    expect(watch.outliers({ GBP: 6_000_000n })).toEqual([]);
  });

  it('keeps memory bounded: the largest rows per currency are listed, largest first', () => {
    const watch = new OutlierWatch();
    for (let line = 2; line < 5002; line++) watch.add(line, null, 'EUR', 100n);
    for (let line = 5002; line < 5102; line++) watch.add(line, null, 'EUR', BigInt(line) * 1000n);
    const found = watch.outliers({});
    expect(found).toHaveLength(OUTLIERS_LISTED);
    expect(found[0]?.line).toBe(5101);
    expect(found.every((o, i) => i === 0 || BigInt(o.amount) <= BigInt(found[i - 1]?.amount ?? '0'))).toBe(true);
  });
});
