/**
 * How many wrong codes the sign-in page takes, counted three ways over a
 * sliding window: for one person from one address (someone mistyping, or
 * guessing from one place), from one address whatever the name (one place
 * guessing many people's codes), and for one person from anywhere (guessing one
 * person's code from many places). Only wrong codes count, so a person at an
 * address where someone else typed wrong codes for *their* name still signs in,
 * and the address's limit is well above one person's. A code has 50 bits and
 * lasts 15 minutes: these limits keep guessing hopeless while a person who
 * mistypes waits minutes, not hours. Pure, but for the injected clock.
 */
import type { Clock } from '../clock.js';

export interface SignInLimits {
  windowMs: number;
  perPersonAtAddress: number;
  perAddress: number;
  perPerson: number;
}

export const SIGN_IN_LIMITS: SignInLimits = { windowMs: 5 * 60_000, perPersonAtAddress: 5, perAddress: 20, perPerson: 30 };

/** Which limit refused an attempt. */
export type SignInLimit = 'person at address' | 'address' | 'person';

/** An attempt let through: counted as a wrong code unless the caller says otherwise. */
export interface SignInAttempt {
  /** The code was right: the attempt is not counted, and that person's wrong codes from that address are forgotten. */
  succeeded(): void;
  /** No code was looked at (the form's token was refused, say): the attempt is not counted. */
  notTried(): void;
}

export type SignInVerdict = { allowed: true; attempt: SignInAttempt } | { allowed: false; limit: SignInLimit; retryAfterMs: number };

/** Beyond this many counted keys the expired are swept, then the oldest dropped: memory stays bounded. */
const MOST_KEYS = 10_000;

export class SignInThrottle {
  /** The times of wrong codes (and of attempts still running), oldest first, per key. */
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly clock: Clock,
    private readonly limits: SignInLimits = SIGN_IN_LIMITS,
    private readonly mostKeys = MOST_KEYS,
  ) {}

  /**
   * Asks to try a code for `person` (null: a name no one has, counted against
   * the address only) from `address`. The attempt counts as a wrong code from
   * now on, so that attempts running at once cannot pass a limit together.
   */
  attempt(address: string, person: string | null): SignInVerdict {
    const now = this.clock.now();
    const keys: [string, number, SignInLimit][] = [[`address\0${address}`, this.limits.perAddress, 'address']];
    if (person !== null) {
      keys.push([`person\0${person}\0${address}`, this.limits.perPersonAtAddress, 'person at address']);
      keys.push([`person\0${person}`, this.limits.perPerson, 'person']);
    }
    let refusal: { limit: SignInLimit; retryAfterMs: number } | null = null;
    for (const [key, most, limit] of keys) {
      const times = this.recent(key, now);
      if (times.length < most) continue;
      // The limit lifts when enough of these wrong codes have aged out of the window.
      const retryAfterMs = (times[times.length - most] as number) + this.limits.windowMs - now;
      if (!refusal || retryAfterMs > refusal.retryAfterMs) refusal = { limit, retryAfterMs };
    }
    if (refusal) return { allowed: false, ...refusal };
    for (const [key] of keys) this.count(key, now);
    let settled = false;
    const uncount = (): void => {
      if (settled) return;
      settled = true;
      for (const [key] of keys) this.remove(key, now);
    };
    return {
      allowed: true,
      attempt: {
        succeeded: () => {
          uncount();
          if (person !== null) this.failures.delete(`person\0${person}\0${address}`);
        },
        notTried: uncount,
      },
    };
  }

  /** How many keys are counted now (for the bound on memory). */
  get size(): number {
    return this.failures.size;
  }

  private recent(key: string, now: number): number[] {
    const times = this.failures.get(key);
    if (!times) return [];
    const from = times.findIndex((at) => at > now - this.limits.windowMs);
    if (from === 0) return times;
    if (from === -1) {
      this.failures.delete(key);
      return [];
    }
    times.splice(0, from);
    return times;
  }

  private count(key: string, now: number): void {
    const times = this.failures.get(key);
    if (times) {
      times.push(now);
      return;
    }
    if (this.failures.size >= this.mostKeys) this.makeRoom(now);
    this.failures.set(key, [now]);
  }

  private remove(key: string, at: number): void {
    const times = this.failures.get(key);
    const index = times ? times.lastIndexOf(at) : -1;
    if (!times || index === -1) return;
    times.splice(index, 1);
    if (times.length === 0) this.failures.delete(key);
  }

  private makeRoom(now: number): void {
    for (const key of [...this.failures.keys()]) this.recent(key, now);
    // Still full: the keys counted first go (a Map keeps the order keys were added in).
    for (const key of this.failures.keys()) {
      if (this.failures.size < this.mostKeys) break;
      this.failures.delete(key);
    }
  }
}
