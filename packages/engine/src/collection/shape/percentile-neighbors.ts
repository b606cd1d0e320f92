import { percentileOfRanks } from './growing-percentiles.ts';

/**
 * A percentile of many groups at once without sorting each group's values: one statement picks
 * a value `v` near each group's ranks (any value within one place of them: DuckDB's
 * `quantile_disc` at the level), a second counts around it, and the ranks follow from the
 * counts here. The counts prove which value sits at each rank, so nothing rests on how the
 * database chose `v`; where they do not reach a rank the answer is undefined, never a guess, and
 * the run stage sorts the values instead. Pure: no SQL.
 */

/**
 * What the second statement counts around a value in one group's values. A zero's sign is not
 * kept: the rule's interpolation of ranks that are zeros gives +0 whatever their signs, and JSON
 * writes −0 as 0.
 */
export interface AroundCounts {
  /** How many values are below the value, and equal to it. */
  below: number;
  equal: number;
  /** The largest value below it, and the smallest above it. */
  under: number | null;
  over: number | null;
}

/** {@link AroundCounts} with the value `v` chosen near the ranks; null where there is no value. */
export interface AroundValue extends AroundCounts {
  v: number | null;
}

/** The statement's columns of {@link AroundCounts}, in order, for one group. */
export const AROUND_COLUMNS = 4;

/** Reads {@link AroundCounts} from the {@link AROUND_COLUMNS} values a row holds at `at`. */
export function aroundCounts(row: readonly unknown[], at: number): AroundCounts {
  const num = (value: unknown) => (value === null || value === undefined ? null : Number(value));
  return {
    below: Number(row[at] ?? 0),
    equal: Number(row[at + 1] ?? 0),
    under: num(row[at + 2]),
    over: num(row[at + 3]),
  };
}

/**
 * {@link AroundValue} of a group around `v` from its parts' counts around `v` (a series' cells,
 * a window's buckets), summed.
 */
export function summedAround(v: number | null, parts: readonly AroundCounts[]): AroundValue {
  const whole: AroundValue = { v, below: 0, equal: 0, under: null, over: null };
  for (const b of parts) {
    whole.below += b.below;
    whole.equal += b.equal;
    if (b.under !== null && (whole.under === null || b.under > whole.under)) whole.under = b.under;
    if (b.over !== null && (whole.over === null || b.over < whole.over)) whole.over = b.over;
  }
  return whole;
}

/**
 * The value at 0-based rank `i` of the sorted values that `around` describes; undefined where
 * the counts do not reach it.
 */
export function valueAtRank(around: AroundValue, i: number): number | undefined {
  const { v, below, equal } = around;
  if (v === null) return undefined;
  if (i >= below && i < below + equal) return v;
  if (i === below - 1 && around.under !== null) return around.under;
  if (i === below + equal && around.over !== null) return around.over;
  return undefined;
}

/**
 * The percentile at `level` of `n` values that `around` describes: null where there is none,
 * undefined where the counts do not reach its ranks.
 */
export function percentileAround(
  level: number,
  n: number,
  around: AroundValue,
): number | null | undefined {
  if (n === 0) return null;
  const h = level * (n - 1);
  const lo = valueAtRank(around, Math.floor(h));
  const hi = valueAtRank(around, Math.ceil(h));
  if (lo === undefined || hi === undefined) return undefined;
  return percentileOfRanks(level, n, lo, hi);
}
