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
  const params = { ...bound.params, lo, hi };
  const sql = `SELECT ${aggregateSql(aggregation, bound.metricSql, params)} AS v FROM ${bound.relation}
     WHERE ${bound.inCollection}
       AND timestamp BETWEEN {lo:Int64} AND {hi:Int64}
       AND ${bound.where.filters}`;
  const exact = aggregation === 'Sum' || aggregation === 'Avg';
  return { sql, params, text: [], parts: exact ? [0] : [] };
}
