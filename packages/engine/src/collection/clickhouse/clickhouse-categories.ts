import type { Envelope, TimeWindow } from '@analytics-chart/protocol';
import { ClickHouseParams } from '../../storage/clickhouse/clickhouse-params.ts';
import type { ClickHouseRun } from '../../storage/clickhouse/clickhouse-run.ts';
import { boundField } from '../bind/bound-query.ts';
import type { ClickHouseBoundQuery } from '../bind/clickhouse/bind-clickhouse-query.ts';
import { categoryCap, rankCandidatesSql } from '../plan/split-series.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import { categoriesEnvelope } from '../shape/categories-shape.ts';
import { aggregateOrderSql, aggregateSql, readAggregate } from './clickhouse-aggregate-sql.ts';
import { inWindow, rowsOf, source } from './clickhouse-events.ts';
import { numericFieldSql, stringFieldSql } from './clickhouse-fields.ts';

/**
 * Table, Bar Chart and Pie Chart: one row per string form of the split field, shaped by
 * `shape/categories-shape.ts`. Events without the split field are left out.
 */
export async function clickHouseCategories(
  bound: ClickHouseBoundQuery,
  window: TimeWindow,
  run: ClickHouseRun,
): Promise<Envelope> {
  const { query } = bound;
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return categoriesEnvelope(query, []);
  const params = new ClickHouseParams();
  const sql = rankingSql(bound, lo, hi, run, params, categoryCap(query.graph_type));
  const rows = await rowsOf<{ sp: string; v: unknown }>(run, sql, params);
  return categoriesEnvelope(
    query,
    rows.map((r) => [r.sp, r.v]),
    readAggregate,
  );
}

/** The statement of the categories: rows `(sp, v)` that may rank among the first `cap`. */
export function rankingSql(
  bound: ClickHouseBoundQuery,
  lo: number,
  hi: number,
  run: ClickHouseRun,
  params: ClickHouseParams,
  cap: number,
): string {
  const { query } = bound;
  const split = stringFieldSql(boundField(bound, query.split ?? ''), params);
  const m = bound.metric === null ? 'NULL' : numericFieldSql(bound.metric, params);
  const value = aggregateSql(query.aggregation, m, params);
  const order = aggregateOrderSql(query.aggregation, m, params);
  return rankCandidatesSql(
    'sp, v',
    `SELECT ${split} AS sp, ${value} AS v, ${order.key} AS o, ${order.slack} AS e FROM ${source(run)}
     WHERE ${inWindow(bound, lo, hi, params)} AND sp IS NOT NULL
     GROUP BY sp`,
    params.add('UInt32', cap),
  );
}
