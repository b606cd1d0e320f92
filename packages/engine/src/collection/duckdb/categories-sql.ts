import { BIGINT } from '../../storage/duckdb/duckdb-api.ts';
import type { Statement } from '../../storage/duckdb/sql-params.ts';
import type { DuckDbBoundQuery } from '../bind/duckdb/bind-duckdb-query.ts';
import { categoryCap, rankCandidatesSql } from '../plan/split-series.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import { aggregateOrderSql, aggregateSql } from './aggregate-sql.ts';
import { and, windowSql } from './conditions-sql.ts';
import { rollupTotalsStatement, rollupWindow } from './rollup-sql.ts';

/**
 * The render stage of Table, Bar Chart and Pie Chart on DuckDB: the statement whose rows are
 * `[split value, aggregate]` for every split value that may rank among the first
 * {@link categoryCap} (`shape/categories-shape.ts` orders them by their exact values), from the
 * bound query alone, from the rollups where they give the events' answer (`rollup-sql.ts`).
 * Pure: no catalog, no connection. Events without the split field are left out.
 */

/** A categories statement: `split values`, one row per candidate split value. */
export interface CategoriesStatement extends Statement {
  form: 'split values';
}

/** The statement, or null where nothing can be read: an empty window, a split no event holds. */
export function categoriesSql(bound: DuckDbBoundQuery): CategoriesStatement | null {
  const { query } = bound;
  const { lo, hi } = windowSeconds(bound.windows.window);
  if (lo > hi || bound.splitSql === null) return null;
  const read = rollupWindow(
    bound,
    { plan: null, lo, hi },
    (r) => r.where !== null && r.split !== null,
  );
  if (read?.rollup.where) {
    // Every split value comes back: a rolled-up key has few, and the shape stage ranks them.
    const filters = { events: bound.where.filters, rollup: read.rollup.where.filters };
    return { form: 'split values', ...rollupTotalsStatement(read, filters, bound.splitSql) };
  }
  const m = bound.metricSql ?? 'NULL::DOUBLE';
  const params = { ...bound.params, cap: { value: categoryCap(query.graph_type), type: BIGINT } };
  const order = aggregateOrderSql(query.aggregation, 'm');
  return {
    form: 'split values',
    sql: rankCandidatesSql(
      'sp, v',
      `SELECT sp, ${aggregateSql(query.aggregation, 'm', 'TRUE', bound.sums)} AS v, ${order.key} AS o, ${order.slack} AS e FROM (
         SELECT ${bound.splitSql} AS sp, ${m} AS m FROM ${bound.relation}
         WHERE ${and(windowSql(lo, hi, params), bound.where.filters)}
       ) WHERE sp IS NOT NULL
       GROUP BY sp`,
      '$cap',
    ),
    params,
  };
}
