import type { ClickHouseBoundQuery } from '../bind/clickhouse/bind-clickhouse-query.ts';
import { categoryCap, rankCandidatesSql } from '../plan/split-series.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import { aggregateOrderSql, aggregateSql } from './clickhouse-aggregate-sql.ts';
import type { ClickHouseStatement } from './clickhouse-statement.ts';

/**
 * The render stage of Table, Bar Chart and Pie Chart on ClickHouse: the statement whose rows are
 * `[split value, aggregate]` for every split value that may rank among the first
 * {@link categoryCap} (`shape/categories-shape.ts` orders them by their exact values), from the
 * bound query alone, as DuckDB's `categories-sql.ts` writes it. Pure: no key columns, no client.
 * Events without the split field are left out.
 */
export function categoriesSql(bound: ClickHouseBoundQuery): ClickHouseStatement | null {
  const { query } = bound;
  const { lo, hi } = windowSeconds(bound.windows.window);
  if (lo > hi || bound.splitSql === null) return null;
  const params: Record<string, unknown> = { ...bound.params, lo, hi };
  const m = bound.metricSql;
  const value = aggregateSql(query.aggregation, m, params);
  const order = aggregateOrderSql(query.aggregation, m, params);
  params.cap = categoryCap(query.graph_type);
  const sql = rankCandidatesSql(
    'sp, v',
    `SELECT ${bound.splitSql} AS sp, ${value} AS v, ${order.key} AS o, ${order.slack} AS e FROM ${bound.relation}
     WHERE ${bound.inCollection}
       AND timestamp BETWEEN {lo:Int64} AND {hi:Int64}
       AND ${bound.where.filters} AND sp IS NOT NULL
     GROUP BY sp`,
    '{cap:UInt32}',
  );
  const exact = query.aggregation === 'Sum' || query.aggregation === 'Avg';
  return { sql, params, text: [0], parts: exact ? [1] : [] };
}
