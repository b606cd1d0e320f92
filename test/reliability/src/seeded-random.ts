/**
 * A small seeded PRNG (mulberry32), so the random moments and mixes of a run can be replayed
 * from the seed it prints.
 */

/** A generator of floats in [0, 1) and helpers over it. */
export interface Random {
  seed: number;
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
}

/** A generator for `seed` (default: from `RELIABILITY_SEED`, else the clock). */
export function seededRandom(
  seed = Number(process.env.RELIABILITY_SEED) || Date.now() % 2 ** 31,
): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    seed,
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)] as (typeof items)[number],
  };
}
