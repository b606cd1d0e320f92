import type { ClickHouseBoundQuery } from '../bind/clickhouse/bind-clickhouse-query.ts';
import { categoryCap, rankCandidatesSql } from '../plan/split-series.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import { aggregateOrderSql, aggregateSql, orderColumnsSql } from './clickhouse-aggregate-sql.ts';
import type { ClickHouseStatement } from './clickhouse-statement.ts';
import { and } from './conditions-sql.ts';
import { lineParams } from './line-sql.ts';
import { rollupTotalsSql, rollupWindow } from './rollup-sql.ts';

/**
 * The render stage of Table, Bar Chart and Pie Chart on ClickHouse: the statement whose rows are
 * `[split value, aggregate]` for every split value that may rank among the first
 * {@link categoryCap} (`shape/categories-shape.ts` orders them by their exact values), from the
 * bound query alone, as DuckDB's `categories-sql.ts` writes it (from the rollups where they
 * give the events' answer, `rollup-sql.ts`). Pure: no key columns, no client. Events without
 * the split field are left out.
 */
export function categoriesSql(bound: ClickHouseBoundQuery): ClickHouseStatement | null {
  const { query } = bound;
  const { lo, hi } = windowSeconds(bound.windows.window);
  if (lo > hi || bound.splitSql === null) return null;
  const exact = query.aggregation === 'Sum' || query.aggregation === 'Avg';
  const rollupParams = lineParams(bound.params);
  const read = rollupWindow(
    bound,
    { plan: null, lo, hi, key: '0' },
    rollupParams.add,
    (r) => r.where !== null && r.split !== null,
  );
  if (read?.rollup.where) {
    // Every split value comes back: a rolled-up key has few, and the shape stage ranks them.
    const filters = { events: bound.where.filters, rollup: read.rollup.where.filters };
    const sql = rollupTotalsSql(read, filters, bound.splitSql);
    return { sql, params: rollupParams.values, text: [0], parts: exact ? [1] : [] };
  }
  const params: Record<string, unknown> = { ...bound.params, lo, hi };
  const m = bound.metricSql;
  const value = aggregateSql(query.aggregation, m, params);
  const order = aggregateOrderSql(query.aggregation, m, params);
  params.cap = categoryCap(query.graph_type);
  const grouped = `SELECT ${bound.splitSql} AS sp, ${value} AS v, ${orderColumnsSql(order)} FROM ${bound.relation}
     WHERE ${and(bound.inCollection, 'timestamp BETWEEN {lo:Int64} AND {hi:Int64}', bound.where.filters)}
       AND sp IS NOT NULL
     GROUP BY sp`;
  // A key that is the value itself is read from the grouped rows (aggregateOrderSql).
  const keyed = order.key === null ? `SELECT *, v AS o FROM (${grouped})` : grouped;
  const sql = rankCandidatesSql('sp, v', keyed, '{cap:UInt32}');
  return { sql, params, text: [0], parts: exact ? [1] : [] };
}
