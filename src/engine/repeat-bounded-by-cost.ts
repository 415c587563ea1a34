/**
 * How often to repeat work whose cost grows with what it covers (rewriting a
 * batch's result file, counting its rows): every `everyMs`, and never more
 * often than `costFactor` times as long as the last time took, so that at a
 * million rows it takes at most 1/costFactor of the time. Pure: the caller
 * says when it ran.
 */
export class RepeatBoundedByCost {
  private lastAt: number;
  private lastTookMs = 0;

  constructor(
    private readonly everyMs: number,
    private readonly costFactor: number,
    now: number,
  ) {
    this.lastAt = now;
  }

  /** How long after the last time the next is due. */
  interval(): number {
    return Math.max(this.everyMs, this.costFactor * this.lastTookMs);
  }

  due(now: number): boolean {
    return now - this.lastAt >= this.interval();
  }

  ran(startedAt: number, endedAt: number): void {
    this.lastAt = endedAt;
    this.lastTookMs = endedAt - startedAt;
  }
}
