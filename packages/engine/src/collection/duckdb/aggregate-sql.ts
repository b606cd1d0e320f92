import type { Aggregation } from '@analytics-chart/protocol';
import { QUANTILE } from '../plan/collection-plan.ts';

/** 2^64, by which Avg and percentiles scale values where plain arithmetic would overflow. */
const SCALE = '18446744073709551616.0::DOUBLE';

/**
 * The aggregate over a numeric expression `m` (ignored by Count), optionally restricted to the
 * rows where `condition` holds, or over the window `over`. Percentiles are `quantile_cont`: linear interpolation between
 * the closest ranks.
 */
export function aggregateSql(
  aggregation: Aggregation,
  m: string | null,
  condition = 'TRUE',
  over = '',
): string {
  // `over`: a window (` OVER (…)`) each aggregate call is computed over, instead of a group.
  const filter = (condition === 'TRUE' ? '' : ` FILTER (WHERE ${condition})`) + over;
  if (aggregation === 'Count') return `count(*)${filter}`;
  if (m === null) return aggregation === 'Sum' ? '0::DOUBLE' : 'NULL::DOUBLE';
  // A sum over no numeric values is 0, also where it ranks groups.
  if (aggregation === 'Sum') return `coalesce(sum(${m})${filter}, 0)`;
  if (aggregation === 'Avg') {
    // Where the plain sum overflows (values near the largest double), the mean of the values
    // scaled down by 2^64, scaled back: exact scaling, and a mean never exceeds its values.
    const plain = `avg(${m})${filter}`;
    return `CASE WHEN isfinite(${plain}) THEN ${plain} ELSE avg(${m} / ${SCALE})${filter} * ${SCALE} END`;
  }
  // quantile_cont weighs the two ranks (lo·(1−d) + hi·d), which rounds equal subnormal ranks
  // to 0: values scaled up by 2^64 are normal, and scaling back is exact. Where scaled values
  // overflow, the ranks are far from subnormal and the plain interpolation is right.
  const p = QUANTILE[aggregation];
  const scaled = `quantile_cont(${m} * ${SCALE}, ${p})${filter}`;
  return `CASE WHEN isfinite(${scaled}) THEN ${scaled} / ${SCALE} ELSE quantile_cont(${m}, ${p})${filter} END`;
}
