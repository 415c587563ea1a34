/**
 * A bounded cache that notices when it is not helping. Batches whose senders
 * repeat hit it almost always; a batch where every row has its own sender would
 * only churn it. So it counts hits over each window of lookups, and while the
 * last window's hit rate is below a floor it stops storing (lookups go on, so it
 * can warm up again in the next window).
 */
export class Memo<K, V> {
  private readonly entries = new Map<K, V>();
  private lookups = 0;
  private hits = 0;
  private storing = true;

  constructor(
    private readonly limit: number,
    private readonly window = 4096,
    private readonly floor = 0.25,
  ) {}

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    this.lookups += 1;
    if (value !== undefined) this.hits += 1;
    if (this.lookups === this.window) {
      this.storing = this.hits / this.lookups >= this.floor;
      this.lookups = 0;
      this.hits = 0;
    }
    return value;
  }

  set(key: K, value: V): void {
    if (!this.storing) return;
    if (this.entries.size >= this.limit) this.entries.clear();
    this.entries.set(key, value);
  }

  clear(): void {
    this.entries.clear();
  }
}
