/** Rows counted by corridor as they are stored (the corridor summary): each corridor apart, whatever its parts hold. */
import { describe, expect, it } from 'vitest';
import type { StoredRequest } from '../../src/store/port.js';
import { CorridorCounts } from '../../src/store/corridor-counts.js';

const stored = (country: string | null, type: string, input = 'USD', output = 'GBP'): StoredRequest => ({
  json: '{}', inputCurrency: input, outputAmount: '100', outputCurrency: output, recipientName: null, recipientKey: null, country, type,
});

describe('corridor counts', () => {
  it('counts rows of the same corridor together, and keeps corridors apart even when their parts would join alike', () => {
    const counts = new CorridorCounts();
    for (const row of [stored('GBR', 'bank'), stored('GBR', 'bank'), stored('NGA', 'cash', 'USD', 'NGN'), stored('A B', 'c'), stored('A', 'B c'), stored(null, 'bank'), stored('', 'bank')]) counts.add(row);
    expect([...counts.values()]).toEqual([
      { country: 'GBR', type: 'bank', inputCurrency: 'USD', outputCurrency: 'GBP', rows: 2 },
      { country: 'NGA', type: 'cash', inputCurrency: 'USD', outputCurrency: 'NGN', rows: 1 },
      { country: 'A B', type: 'c', inputCurrency: 'USD', outputCurrency: 'GBP', rows: 1 },
      { country: 'A', type: 'B c', inputCurrency: 'USD', outputCurrency: 'GBP', rows: 1 },
      { country: null, type: 'bank', inputCurrency: 'USD', outputCurrency: 'GBP', rows: 1 },
      { country: '', type: 'bank', inputCurrency: 'USD', outputCurrency: 'GBP', rows: 1 },
    ]);
  });
});
