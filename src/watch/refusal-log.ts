/**
 * Refused webhook requests, logged at a bounded rate: the first refusal of each
 * kind at once, then a count per kind once a minute. An unauthenticated client
 * hammering the receiver cannot fill the disk with one line per request.
 */
export class RefusalLog {
  private readonly counts = new Map<string, number>();
  private readonly seen = new Set<string>();
  private lastSummary: number;

  constructor(
    private readonly log: (event: string, fields: Record<string, unknown>) => void,
    private readonly now: () => number,
    private readonly everyMs = 60_000,
  ) {
    this.lastSummary = now();
  }

  refused(status: number, reason: string, fields: Record<string, unknown> = {}): void {
    const kind = `${status} ${reason}`;
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    if (!this.seen.has(kind)) {
      this.seen.add(kind);
      this.log('webhook_refused', { status, reason, ...fields, note: 'further refusals of this kind are counted, then summed up once a minute' });
      this.counts.set(kind, 0);
    }
    this.summarise(false);
  }

  /** Writes the counts since the last summary, when a minute has passed (or now, when forced). */
  summarise(force: boolean): void {
    if (!force && this.now() - this.lastSummary < this.everyMs) return;
    const refused = [...this.counts.entries()].filter(([, n]) => n > 0);
    this.lastSummary = this.now();
    if (refused.length === 0) return;
    this.log('webhook_refusals', { since_s: Math.round(this.everyMs / 1000), total: refused.reduce((sum, [, n]) => sum + n, 0), by_kind: Object.fromEntries(refused) });
    this.counts.clear();
  }
}
