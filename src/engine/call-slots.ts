/**
 * At most `size` calls to the service in flight (engine.concurrency). Each step
 * takes a slot and holds it to its end, or gives it back once its calls are
 * done for now: a row whose funding has answered has only its commit left, and
 * the next row's intent can join that commit's group instead of waiting for
 * it. A step that calls again after that takes a slot again for the call. First
 * come, first served.
 */

/** The slot a step holds. */
export interface Slot {
  /** The step's calls are done for now: its slot goes to the next step waiting. Once; after that, nothing. */
  release(): void;
  /**
   * Makes a call holding a slot: the step's own while it holds it, else one taken again, given back once the call has
   * answered (kept to the step's end when it throws). One call at a time.
   */
  call<T>(work: () => Promise<T>): Promise<T>;
}

/** A slot held for the whole step: release() does nothing (a step run where giving it back early is not wanted). */
export const WHOLE_STEP_SLOT: Slot = { release: () => {}, call: (work) => work() };

export class CallSlots {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  private running = 0;

  constructor(size: number) {
    this.free = size;
  }

  /** Steps started and not ended, whether or not they still hold their slot. */
  get activeSteps(): number {
    return this.running;
  }

  /** Runs `work` once a slot is free; the slot is given back at its end, unless `work` gave it back before. */
  async run<T>(work: (slot: Slot) => Promise<T>): Promise<T> {
    await this.take();
    this.running += 1;
    let held = true;
    const release = (): void => {
      if (!held) return;
      held = false;
      this.give();
    };
    const slot: Slot = {
      release,
      call: async (call) => {
        if (held) return call();
        await this.take();
        held = true;
        const result = await call();
        // Answered: given back at once. A call that throws keeps the slot to the step's end, so that the step's failure
        // is noted (see Pipeline.submit) before the next step starts.
        release();
        return result;
      },
    };
    try {
      return await work(slot);
    } finally {
      this.running -= 1;
      release();
    }
  }

  private take(): Promise<void> {
    if (this.free > 0) {
      this.free -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free += 1;
  }
}
