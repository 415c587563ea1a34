/** Work the pipeline starts without awaiting it where it starts it (catch-up reads, a currency's cancellations, reads). */
export class BackgroundWork {
  private readonly running = new Set<Promise<void>>();

  track(work: Promise<void>): void {
    this.running.add(work);
    void work.finally(() => this.running.delete(work));
  }

  /** Resolves once every piece of work tracked, and any tracked meanwhile, has ended. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }
}
