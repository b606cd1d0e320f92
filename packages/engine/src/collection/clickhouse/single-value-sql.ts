import type { TimeWindow } from '@analytics-chart/protocol';
import type { ClickHouseBoundQuery } from '../bind/clickhouse/bind-clickhouse-query.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import { aggregateSql } from './clickhouse-aggregate-sql.ts';
import type { ClickHouseStatement } from './clickhouse-statement.ts';

/**
 * The render stage of Single Value on ClickHouse: per window, the statement whose one row holds
 * the aggregate over the window (`shape/single-value-shape.ts` reads it), from the bound query
 * alone. Pure: no key columns, no client.
 */
export function singleValueSql(
  bound: ClickHouseBoundQuery,
  window: TimeWindow,
): ClickHouseStatement | null {
  const { aggregation } = bound.query;
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return null;
  const params = bound.params.copy();
  const sql = `SELECT ${aggregateSql(aggregation, bound.metricSql, params)} AS v FROM ${bound.relation}
     WHERE ${bound.inCollection}
       AND timestamp BETWEEN ${params.add('Int64', lo)} AND ${params.add('Int64', hi)}
       AND ${bound.where.filters}`;
  const exact = aggregation === 'Sum' || aggregation === 'Avg';
  return { sql, params: params.values, text: [], parts: exact ? [0] : [] };
}
