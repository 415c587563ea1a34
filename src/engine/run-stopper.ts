/**
 * How `run`'s Ctrl-C stops the engine before the session lets go of the
 * service and the store: no new step starts, and the steps whose calls are in
 * flight end with their answers recorded, within a grace. Before, the session
 * closed the HTTP client first and the store after a second and a half, so a
 * call in flight was cut and its row left for the next run to ask the service
 * about (safe, never paid twice, but a question more for every such row).
 *
 * The run attaches its pipeline once it has one (after intake); a stop asked
 * for before that stops the pipeline as soon as it is attached.
 */
export interface Stoppable {
  /** Steps started and not ended. */
  readonly stepsInFlight: number;
  /** Resolves true when every step in flight ended, false when the grace ran out first. */
  stop(graceMs: number): Promise<boolean>;
}

export class RunStopper {
  private engine: Stoppable | null = null;
  private asked: number | null = null;

  attach(engine: Stoppable): void {
    this.engine = engine;
    if (this.asked !== null) void engine.stop(this.asked);
  }

  /** Steps started and not ended now: none before the engine is attached. */
  get stepsInFlight(): number {
    return this.engine?.stepsInFlight ?? 0;
  }

  /** Steps in flight finished (true), or nothing was running yet; false when the grace ran out with some still in flight. */
  async stop(graceMs: number): Promise<boolean> {
    this.asked = graceMs;
    return this.engine === null ? true : this.engine.stop(graceMs);
  }
}
