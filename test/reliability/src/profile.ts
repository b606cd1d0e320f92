/**
 * The two budgets of the reliability suite. `fast` is the subset the regular `pnpm test` runs
 * (the same assertions, fewer kills, cases and seconds); `full` is `pnpm test:reliability`,
 * selected with `RELIABILITY_PROFILE=full`.
 */

/** How much of each item one run does. */
export interface Budget {
  name: 'fast' | 'full';
  /** Durability: kill -9 cycles of the engine process. */
  kills: number;
  /** Load: seconds of warm-up (under the same load) before the RSS baseline is taken. */
  warmupSeconds: number;
  /** Load: seconds of the soak after the warm-up; the whole run lasts warm-up + soak. */
  soakSeconds: number;
  /** Load: seconds of samples whose lowest is the baseline (start of soak) and the final level. */
  memoryWindowSeconds: number;
  /** Hostile input: fast-check runs per property (one property per endpoint and shape family). */
  fuzzRuns: number;
}

const FAST: Budget = {
  name: 'fast',
  kills: 5,
  // The first seconds under load are the heap growing to its working size: a 4 s warm-up left
  // 5–6 % of it inside the soak, so the fast run warms up longer.
  warmupSeconds: 7,
  // Windows of six seconds, three heap probes each. The fast soak judges the live heap, not RSS
  // (see test/load.test.ts): twelve seconds are too few for RSS to settle.
  soakSeconds: 12,
  memoryWindowSeconds: 6,
  fuzzRuns: 60,
};

const FULL: Budget = {
  name: 'full',
  kills: 30,
  warmupSeconds: 30,
  soakSeconds: 300,
  memoryWindowSeconds: 30,
  fuzzRuns: 1500,
};

/** The budget selected by `RELIABILITY_PROFILE` (`full`, anything else is `fast`). */
export function budget(env: NodeJS.ProcessEnv = process.env): Budget {
  return env.RELIABILITY_PROFILE === 'full' ? FULL : FAST;
}
