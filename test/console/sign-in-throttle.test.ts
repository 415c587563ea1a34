/** The sign-in limits' arithmetic, on a manual clock: the three counts, the sliding window, attempts running at once, the bound on memory. */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { SignInThrottle } from '../../src/console/sign-in-throttle.js';
import type { SignInVerdict } from '../../src/console/sign-in-throttle.js';

const LIMITS = { windowMs: 60_000, perPersonAtAddress: 3, perAddress: 5, perPerson: 4 };

/** `count` wrong codes: each let through, then left counted. */
function fail(throttle: SignInThrottle, address: string, person: string | null, count: number): void {
  for (let i = 0; i < count; i += 1) expect(throttle.attempt(address, person).allowed).toBe(true);
}

const refusedBy = (verdict: SignInVerdict): string | null => (verdict.allowed ? null : verdict.limit);

describe('sign-in limits', () => {
  it('counts a person at an address, an address, and a person, each on its own', () => {
    const throttle = new SignInThrottle(new ManualClock(), LIMITS);
    fail(throttle, 'A', 'amy', 3);
    expect(refusedBy(throttle.attempt('A', 'amy'))).toBe('person at address');
    expect(refusedBy(throttle.attempt('A', 'ben'))).toBeNull();
    expect(refusedBy(throttle.attempt('B', 'amy'))).toBeNull();
    // amy: 3 at A, 1 at B; one more anywhere reaches her own limit of 4.
    expect(refusedBy(throttle.attempt('C', 'amy'))).toBe('person');
    // A: 3 for amy, 1 for ben; one unknown name more reaches its limit of 5.
    fail(throttle, 'A', null, 1);
    expect(refusedBy(throttle.attempt('A', 'cat'))).toBe('address');
  });

  it('a refusal lasts until enough wrong codes have left the window, and says how long', () => {
    const clock = new ManualClock();
    const throttle = new SignInThrottle(clock, LIMITS);
    fail(throttle, 'A', 'amy', 1);
    clock.advance(20_000);
    fail(throttle, 'A', 'amy', 2);
    const refused = throttle.attempt('A', 'amy');
    expect(refused).toEqual({ allowed: false, limit: 'person at address', retryAfterMs: 40_000 });
    clock.advance(39_999);
    expect(throttle.attempt('A', 'amy').allowed).toBe(false);
    clock.advance(1);
    expect(throttle.attempt('A', 'amy').allowed, 'the first wrong code has aged out').toBe(true);
  });

  it('an attempt counts from the moment it is let through, so attempts at once cannot pass a limit together; a sign-in or an untried form gives it back', () => {
    const throttle = new SignInThrottle(new ManualClock(), LIMITS);
    const running = [throttle.attempt('A', 'amy'), throttle.attempt('A', 'amy'), throttle.attempt('A', 'amy')];
    expect(running.every((v) => v.allowed)).toBe(true);
    expect(throttle.attempt('A', 'amy').allowed, 'a fourth while three run').toBe(false);
    const [first, second] = running.map((v) => (v.allowed ? v.attempt : null));
    first?.notTried();
    first?.notTried();
    expect(throttle.attempt('A', 'amy').allowed, 'one given back (once)').toBe(true);
    expect(throttle.attempt('A', 'amy').allowed).toBe(false);
    second?.succeeded();
    // A sign-in forgets amy's wrong codes from A; her own count and A's keep the others.
    expect(throttle.attempt('A', 'amy').allowed).toBe(true);
    expect(throttle.attempt('B', 'amy').allowed).toBe(true);
    expect(refusedBy(throttle.attempt('C', 'amy')), 'two running, and two more').toBe('person');
  });

  it('keeps at most its bound of counts, dropping the expired first', () => {
    const clock = new ManualClock();
    const throttle = new SignInThrottle(clock, LIMITS, 10);
    for (let i = 0; i < 10; i += 1) fail(throttle, `old-${i}`, null, 1);
    clock.advance(60_000);
    fail(throttle, 'new', null, 5);
    expect(throttle.size).toBe(1);
    expect(throttle.attempt('new', null).allowed).toBe(false);
    for (let i = 0; i < 25; i += 1) fail(throttle, `many-${i}`, null, 1);
    expect(throttle.size).toBeLessThanOrEqual(10);
  });
});
