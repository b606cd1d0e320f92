import type { Aggregation } from '@analytics-chart/protocol';
import { DOUBLE } from '../../storage/duckdb/duckdb-api.ts';
import { type SumForm, sumFormSql } from '../../storage/duckdb/exact-sum-sql.ts';
import type { NamedParams } from '../../storage/duckdb/sql-params.ts';
import { QUANTILE } from '../plan/collection-plan.ts';

/** 2^64, by which the ranking keys of Sum and Avg scale values down so that sums never overflow. */
const SCALE = '18446744073709551616.0::DOUBLE';

/**
 * The aggregate over a numeric expression `m` (ignored by Count), optionally restricted to the
 * rows where `condition` holds. Sum and Avg are their parts in the form `sums` (`sumFormSql`,
 * read by `plan/exact-sum.ts`'s `readAggregate`); where SQL must order by them,
 * {@link aggregateOrderSql} is the key. Percentiles are {@link percentileSql}.
 */
export function aggregateSql(
  aggregation: Aggregation,
  m: string | null,
  condition = 'TRUE',
  sums?: SumForm,
): string {
  const filter = condition === 'TRUE' ? '' : ` FILTER (WHERE ${condition})`;
  if (aggregation === 'Count') return `count(*)${filter}`;
  if (m === null) return 'NULL';
  if (aggregation === 'Sum' || aggregation === 'Avg') return sumFormSql(sums, m, condition);
  return percentileSql(m, QUANTILE[aggregation] as number, condition);
}

/**
 * The percentile rule both drivers write as the same IEEE steps (and `shape/growing-percentiles.ts`
 * for a Cumulative Line): the sorted values x, h =
 * level·(n−1) as a double, lo = x[⌊h⌋], hi = x[⌈h⌉], d = h − ⌊h⌋, and lo + d·(hi − lo) (equal
 * ranks, subnormal ones too, give lo exactly); where hi − lo overflows (ranks near ±1.8e308 on
 * both sides), lo·(1 − d) + hi·d, which cannot.
 */
function percentileSql(m: string, level: number, condition: string): string {
  const sorted = `list_sort(list(${m}) FILTER (WHERE (${condition}) AND ${m} IS NOT NULL))`;
  const h = `(${level}::DOUBLE * (len(${sorted}) - 1)::DOUBLE)`;
  const lo = `${sorted}[floor(${h})::BIGINT + 1]`;
  const hi = `${sorted}[ceil(${h})::BIGINT + 1]`;
  const d = `(${h} - floor(${h}))`;
  const near = `(${lo} + ${d} * (${hi} - ${lo}))`;
  return `CASE WHEN isfinite(${near}) THEN ${near} ELSE ${lo} * (1 - ${d}) + ${hi} * ${d} END`;
}

/**
 * A percentile's two closest ranks of the one group of a statement, once its count of values `n`
 * is known: `(count, [x[⌊h⌋], x[⌈h⌉]])` of the sorted values, h = level·(n − 1) as a double,
 * selected by `quantile_disc` without sorting them all (sorting was most of the query). Its index
 * for a fraction q is max(1, n − ⌊n − n·q⌋) − 1, so (i + ½)/n picks x[i]; the count comes back
 * to show the ranks were chosen for the same values. The run stage interpolates them by
 * {@link percentileSql}'s steps (`shape/growing-percentiles.ts`, `interpolate`).
 */
export function percentileRanksSql(
  m: string,
  level: number,
  n: number,
  params: NamedParams,
): string {
  const h = level * (n - 1);
  params.rank_lo = { value: (Math.floor(h) + 0.5) / n, type: DOUBLE };
  params.rank_hi = { value: (Math.ceil(h) + 0.5) / n, type: DOUBLE };
  return `count(${m}), quantile_disc(${m}, [$rank_lo, $rank_hi])`;
}

/**
 * What SQL ranks a group by where it must pick some (`plan/split-series.ts`, rankCandidatesSql):
 * `key` ± `slack` holds the aggregate's value. Count's and percentiles' keys are their exact
 * values; Sum's and Avg's are floating-point sums scaled by 2^-64 (which never overflow), and the
 * slack bounds what any order of addition, the scaling and the rule's one rounding can move them
 * by: (n + 4)·10^-15 (over 8 times n units of the last place) of the sum of |m|, and 10^-300 per
 * value for the scaling's underflow.
 */
export function aggregateOrderSql(
  aggregation: Aggregation,
  m: string | null,
): { key: string; slack: string } {
  if (m === null) return { key: aggregation === 'Sum' ? '0::DOUBLE' : 'NULL::DOUBLE', slack: '0' };
  if (aggregation === 'Sum' || aggregation === 'Avg') {
    const key = `sum(${m} / ${SCALE})`;
    const slack = `(count(*) + 4) * (1e-15 * sum(abs(${m}) / ${SCALE}) + 1e-300)`;
    return aggregation === 'Sum'
      ? { key: `coalesce(${key}, 0)`, slack: `coalesce(${slack}, 0)` }
      : { key: `${key} / count(${m})`, slack: `${slack} / count(${m})` };
  }
  return { key: aggregateSql(aggregation, m), slack: '0' };
}
