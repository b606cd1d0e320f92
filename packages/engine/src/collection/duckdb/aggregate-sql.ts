import type { Aggregation } from '@analytics-chart/protocol';
import { QUANTILE } from '../plan/collection-plan.ts';

/**
 * The aggregate over a numeric expression `m` (ignored by Count), optionally restricted to the
 * rows where `condition` holds. Percentiles are `quantile_cont`: linear interpolation between
 * the closest ranks.
 */
export function aggregateSql(
  aggregation: Aggregation,
  m: string | null,
  condition = 'TRUE',
): string {
  const filter = condition === 'TRUE' ? '' : ` FILTER (WHERE ${condition})`;
  if (aggregation === 'Count') return `count(*)${filter}`;
  if (m === null) return aggregation === 'Sum' ? '0::DOUBLE' : 'NULL::DOUBLE';
  // A sum over no numeric values is 0, also where it ranks groups.
  if (aggregation === 'Sum') return `coalesce(sum(${m})${filter}, 0)`;
  if (aggregation === 'Avg') return `avg(${m})${filter}`;
  return `quantile_cont(${m}, ${QUANTILE[aggregation]})${filter}`;
}
