import type { Aggregation } from '@analytics-chart/protocol';
import type { ClickHouseParams } from '../../storage/clickhouse/clickhouse-params.ts';
import { QUANTILE } from '../plan/collection-plan.ts';

/** 2^64, by which Avg and percentiles scale values where plain arithmetic would overflow. */
const SCALE = 'toFloat64(18446744073709551616.)';

/** The aggregate over `m` (NULL where the field has no number), and how an empty set reads. */
export function aggregateSql(
  aggregation: Aggregation,
  m: string,
  params: ClickHouseParams,
  condition?: string,
): string {
  // The -If combinators aggregate only the rows where `condition` holds.
  const only = condition === undefined ? '' : 'If';
  const and = condition === undefined ? '' : `, ${condition}`;
  if (aggregation === 'Count') return `toFloat64(count${only}(${condition ?? ''}))`;
  if (aggregation === 'Sum') return `sumOrNull${only}(${m}${and})`;
  if (aggregation === 'Avg') {
    // Where the plain sum overflows (values near the largest double), the mean of the values
    // scaled down by 2^64, scaled back: exact scaling, and a mean never exceeds its values.
    const plain = `avgOrNull${only}(${m}${and})`;
    return `if(isFinite(${plain}), ${plain}, avgOrNull${only}(${m} / ${SCALE}${and}) * ${SCALE})`;
  }
  const p = params.add('Float64', QUANTILE[aggregation]);
  // quantileExactInclusive interpolates between closest ranks: DuckDB's quantile_cont; -OrNull
  // reads NULL where no value was aggregated.
  // Where the ranks' distance overflows (±1.8e308 on both sides), the same on values scaled
  // down by 2^64, scaled back.
  const plain = `quantileExactInclusive${only}OrNull(${p})(${m}${and})`;
  return `if(isFinite(${plain}), ${plain}, quantileExactInclusive${only}OrNull(${p})(${m} / ${SCALE}${and}) * ${SCALE})`;
}
