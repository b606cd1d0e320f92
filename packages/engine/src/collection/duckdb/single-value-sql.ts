import type { TimeWindow } from '@analytics-chart/protocol';
import type { Statement } from '../../storage/duckdb/sql-params.ts';
import type { DuckDbBoundQuery } from '../bind/duckdb/bind-duckdb-query.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import { aggregateSql } from './aggregate-sql.ts';
import { and, windowSql } from './conditions-sql.ts';
import { rollupTotalsStatement, rollupWindow } from './rollup-sql.ts';

/**
 * The render stage of Single Value on DuckDB: per window, the statement whose one row holds the
 * aggregate over the window (`shape/single-value-shape.ts` reads it), from the bound query
 * alone, from the rollups where they give the events' answer (`rollup-sql.ts`). Pure: no
 * catalog, no connection.
 */

/** A Single Value statement: `value`, one row whose first column is the aggregate. */
export interface SingleValueStatement extends Statement {
  form: 'value';
}

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
  return {
    form: 'value',
    sql: `SELECT ${aggregateSql(bound.query.aggregation, bound.metricSql)} FROM ${bound.relation}
     WHERE ${and(windowSql(lo, hi, params), bound.where.filters)}`,
    params,
  };
}
