import type { Aggregation } from '@analytics-chart/protocol';
import { setSeriesValue } from '../../set-own.ts';
import type { ExactSum } from '../plan/exact-sum.ts';
import { byValueThenName } from '../plan/split-series.ts';
import type { Bucket } from '../plan/time-buckets.ts';

/**
 * The shape stage of the six line kinds, the same for every driver: a driver's statements give
 * each bucket's aggregates, and these turn them into the envelope's rows (hidden empty buckets,
 * running values, ratios, split series). Pure: no SQL and no storage.
 */

/** One row of a line: `{timestamp, <value key or series>: value, …}`. */
export type LineRow = Record<string, string | number | null>;

/**
 * One row per bucket of the plan, labelled, with `values[i]` under `key`; with `hideMissing`,
 * a bucket no event fell in (`held[i]` false) has no row.
 */
export function lineRows(
  buckets: readonly Bucket[],
  hideMissing: boolean,
  held: readonly boolean[],
  key: string,
  values: readonly (number | null)[],
): LineRow[] {
  const rows: LineRow[] = [];
  for (let i = 0; i < buckets.length; i++) {
    if (hideMissing && !held[i]) continue;
    rows.push({ timestamp: (buckets[i] as Bucket).label, [key]: values[i] ?? null });
  }
  return rows;
}

/** A Ratio Line's value: null where either side is null or the denominator is 0. */
export function ratioOf(numerator: number | null, denominator: number | null): number | null {
  return numerator === null || denominator === null || denominator === 0
    ? null
    : numerator / denominator;
}

/**
 * What one bucket adds to a Cumulative Line: its event count, its metric's exact sum (with how
 * many values it holds, for the mean), or, for a percentile, the percentile over the growing
 * frame up to the bucket's end.
 */
export interface RunningPart {
  held: boolean;
  count: number;
  sum: ExactSum | null;
  quantile: number | null;
}

/**
 * A Cumulative Line's value per bucket: over the window's start to the bucket's end. Count
 * adds up; Sum and Avg add the buckets' exact sums into `running` and round once per value
 * shown; a percentile keeps the last bucket's value through buckets without events.
 */
export function runningValues(
  aggregation: Aggregation,
  parts: readonly RunningPart[],
  running: ExactSum,
): (number | null)[] {
  let count = 0;
  let last: number | null = null;
  return parts.map((part): number | null => {
    count += part.count;
    if (part.sum) running.addSum(part.sum);
    if (aggregation === 'Count') return count;
    if (aggregation === 'Sum') return running.sum();
    if (aggregation === 'Avg') return running.mean();
    if (part.held) last = part.quantile ?? last;
    return last;
  });
}

/**
 * Split values by their value over the window: largest first, nulls last, ties by name in the
 * databases' text order, so that a split ranked here and one ranked in SQL agree.
 */
export function rankSeries(values: Array<{ name: string; value: number | null }>): string[] {
  return values.sort(byValueThenName).map((r) => r.name);
}

/**
 * A split line's wide rows `{timestamp, "<series>": value, …}`: each series' value in each
 * bucket, by bucket key (`cells[s]`, one map per series; none or null shown as `empty`); with
 * `hideMissing`, a bucket no event of the series fell in (`held[i]` false) has no row.
 */
export function splitRows(
  buckets: readonly Bucket[],
  hideMissing: boolean,
  held: readonly boolean[],
  series: readonly string[],
  cells: readonly (ReadonlyMap<number, number | null> | undefined)[],
  empty: number | null,
): LineRow[] {
  const rows: LineRow[] = [];
  for (let i = 0; i < buckets.length; i++) {
    if (hideMissing && !held[i]) continue;
    const bucket = buckets[i] as Bucket;
    const row: LineRow = { timestamp: bucket.label };
    for (let s = 0; s < series.length; s++) {
      setSeriesValue(row, series[s] as string, cells[s]?.get(bucket.key) ?? empty);
    }
    rows.push(row);
  }
  return rows;
}
