/**
 * A seeded pseudo-random source (mulberry32), so that a sandbox run with the same
 * seed draws the same delays and faults: a chaos failure can be replayed.
 */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both included. */
  between(min: number, max: number): number;
  /** True with the given probability (0 to 1). */
  chance(rate: number): boolean;
}

export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    between: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (rate) => rate > 0 && next() < rate,
  };
}
