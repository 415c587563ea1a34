/**
 * Rows counted by corridor (recipient's country, payout type, both
 * currencies) as they are stored, for the batch's corridor summary
 * (batch_corridors, see corridor-sql.ts).
 */
import type { StoredRequest } from './port.js';

export interface CorridorCount {
  country: string | null;
  type: string;
  inputCurrency: string;
  outputCurrency: string;
  rows: number;
}

export class CorridorCounts {
  private readonly counts = new Map<string, CorridorCount>();

  add(stored: StoredRequest): void {
    // Unambiguous whatever the parts hold (validated rows carry codes, but the store does not rely on it).
    const key = JSON.stringify([stored.country, stored.type, stored.inputCurrency, stored.outputCurrency]);
    const count = this.counts.get(key);
    if (count) count.rows += 1;
    else this.counts.set(key, { country: stored.country, type: stored.type, inputCurrency: stored.inputCurrency, outputCurrency: stored.outputCurrency, rows: 1 });
  }

  values(): IterableIterator<CorridorCount> {
    return this.counts.values();
  }
}
