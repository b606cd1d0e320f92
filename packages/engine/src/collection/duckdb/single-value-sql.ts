import type { TimeWindow } from '@analytics-chart/protocol';
import type { Statement } from '../../storage/duckdb/sql-params.ts';
import type { DuckDbBoundQuery } from '../bind/duckdb/bind-duckdb-query.ts';
import { QUANTILE } from '../plan/collection-plan.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import { aggregateSql, percentileRanksSql } from './aggregate-sql.ts';
import { and, windowSql } from './conditions-sql.ts';
import { rollupTotalsStatement, rollupWindow } from './rollup-sql.ts';

/**
 * The render stage of Single Value on DuckDB: per window, the statement whose one row holds the
 * aggregate over the window (`shape/single-value-shape.ts` reads it), from the bound query
 * alone, from the rollups where they give the events' answer (`rollup-sql.ts`). Pure: no
 * catalog, no connection.
 */

/**
 * A Single Value statement: `value`, one row whose first column is the aggregate; or, for a
 * percentile of the events, `ranks`: the count of values, then the statement of the two closest
 * ranks for that count (`percentileRanksSql`), read in one snapshot, which run turns into that
 * one row.
 */
export type SingleValueStatement =
  | (Statement & { form: 'value' })
  | { form: 'ranks'; level: number; count: Statement; ranksAt: (n: number) => Statement };

/** The statement of one window, or null where no whole second fits in it. */
export function singleValueSql(
  bound: DuckDbBoundQuery,
  window: TimeWindow,
): SingleValueStatement | null {
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return null;
  const read = rollupWindow(bound, { plan: null, lo, hi }, (r) => r.where !== null);
  if (read?.rollup.where) {
    const filters = { events: bound.where.filters, rollup: read.rollup.where.filters };
    return { form: 'value', ...rollupTotalsStatement(read, filters, null) };
  }
  const params = { ...bound.params };
  const where = and(windowSql(lo, hi, params), bound.where.filters);
  const m = bound.metricSql;
  const level = QUANTILE[bound.query.aggregation];
  if (level !== undefined && m !== null) {
    return {
      form: 'ranks',
      level,
      count: { sql: `SELECT count(${m}) FROM ${bound.relation} WHERE ${where}`, params },
      ranksAt: (n) => {
        const ranked = { ...params };
        const sql = `SELECT ${percentileRanksSql(m, level, n, ranked)} FROM ${bound.relation} WHERE ${where}`;
        return { sql, params: ranked };
      },
    };
  }
  return {
    form: 'value',
    sql: `SELECT ${aggregateSql(bound.query.aggregation, m, 'TRUE', bound.sums)} FROM ${bound.relation}
     WHERE ${where}`,
    params,
  };
}
