import type { TimeWindow } from '@analytics-chart/protocol';
import { aliasOf, exponentSumsSql } from '../../storage/clickhouse/clickhouse-exact-sum-sql.ts';
import type { ClickHouseBoundQuery } from '../bind/clickhouse/bind-clickhouse-query.ts';
import { QUANTILE } from '../plan/collection-plan.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import { aggregateSql, percentileRanksSql } from './clickhouse-aggregate-sql.ts';
import type { ClickHouseStatement } from './clickhouse-statement.ts';
import { and } from './conditions-sql.ts';
import { lineParams } from './line-sql.ts';
import { rollupExponentSumsSql, rollupTotalsSql, rollupWindow } from './rollup-sql.ts';

/**
 * The render stage of Single Value on ClickHouse: per window, the statement whose one row holds
 * the aggregate over the window (`shape/single-value-shape.ts` reads it), from the bound query
 * alone. Sum and Avg over a metric add its values' significands per exponent
 * (`exponentSumsSql`), and percentiles give their two closest ranks, which run reads as that one
 * row; where rollups give the events' answer, the window reads them (`rollup-sql.ts`). Pure: no
 * key columns, no client.
 */
export function singleValueSql(
  bound: ClickHouseBoundQuery,
  window: TimeWindow,
): ClickHouseStatement | null {
  const { aggregation } = bound.query;
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return null;
  const exact = aggregation === 'Sum' || aggregation === 'Avg';
  const rollupParams = lineParams(bound.params);
  const read = rollupWindow(
    bound,
    { plan: null, lo, hi, key: '0' },
    rollupParams.add,
    (r) => r.where !== null,
  );
  if (read?.rollup.where) {
    const filters = { events: bound.where.filters, rollup: read.rollup.where.filters };
    if (exact) {
      const sql = rollupExponentSumsSql(read, filters);
      return { sql, params: rollupParams.values, text: [], parts: [], exponentSums: true };
    }
    const sql = rollupTotalsSql(read, filters, null);
    return { sql, params: rollupParams.values, text: [], parts: [] };
  }
  const params = { ...bound.params, lo, hi };
  const where = and(
    bound.inCollection,
    'timestamp BETWEEN {lo:Int64} AND {hi:Int64}',
    bound.where.filters,
  );
  if ((aggregation === 'Sum' || aggregation === 'Avg') && bound.metricSql !== 'NULL') {
    const sums = exponentSumsSql(bound.metricSql);
    const sql = `SELECT ${sums.select} FROM ${bound.relation}
     WHERE ${where} AND ${sums.where}
     ${sums.groupBy}`;
    return { sql, params, text: [], parts: [], exponentSums: true };
  }
  const level = QUANTILE[aggregation];
  if (level !== undefined && bound.metricSql !== 'NULL') {
    // A percentile reads only the events with a value; the shape stage interpolates.
    const m = aliasOf('v', bound.metricSql);
    const sql = `SELECT ${percentileRanksSql(m, '{level:Float64}', level >= 0.5)} FROM ${bound.relation}
     WHERE ${where} AND ${m.name} IS NOT NULL`;
    return { sql, params: { ...params, level }, text: [], parts: [], percentile: level };
  }
  const sql = `SELECT ${aggregateSql(aggregation, bound.metricSql, params)} AS v FROM ${bound.relation}
     WHERE ${where}`;
  return { sql, params, text: [], parts: exact ? [0] : [] };
}
