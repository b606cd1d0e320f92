import type { Aggregation } from '@analytics-chart/protocol';
import type { ClickHouseParams } from '../../storage/clickhouse/clickhouse-params.ts';
import { QUANTILE } from '../plan/collection-plan.ts';

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
  if (aggregation === 'Avg') return `avgOrNull${only}(${m}${and})`;
  const p = params.add('Float64', QUANTILE[aggregation]);
  // quantileExactInclusive interpolates between closest ranks: DuckDB's quantile_cont; -OrNull
  // reads NULL where no value was aggregated.
  return `quantileExactInclusive${only}OrNull(${p})(${m}${and})`;
}
