import type { CollectionQuery, ResolvedWindows } from '@analytics-chart/protocol';
import type { DuckDBValue } from '@duckdb/node-api';
import type { SqlParams } from '../../storage/duckdb/sql-params.ts';
import type { DuckDbBoundQuery } from '../bind/duckdb/bind-duckdb-query.ts';

/** Runs one statement and returns its rows: the run stage, under the query's time limit. */
export type RunStatement = (sql: string, params: SqlParams) => Promise<DuckDBValue[][]>;

/** One collection-mode query on DuckDB as its renderers see it: bound, and a way to run it. */
export interface QueryContext {
  query: CollectionQuery;
  windows: ResolvedWindows;
  bound: DuckDbBoundQuery;
  run: RunStatement;
}

/** A later segment's ingest order starts this far above an earlier one's. */
const SEGMENT_ROWS = 2 ** 40;
/** The column of {@link sourceSql}'s union that holds ingest order. */
const UNION_ORDER = 'ingest_order';

/**
 * The relation to read: the collection's table, its segments side by side (a column a segment
 * lacks reads as NULL there, which no event of that segment holds), or an empty relation of the
 * same shape.
 */
export function sourceSql(ctx: QueryContext): string {
  const segments = ctx.bound.tables;
  if (segments.length === 1) return (segments[0] as { table: string }).table;
  if (segments.length === 0) {
    return `(SELECT NULL::BIGINT AS "timestamp", NULL::VARCHAR AS "json", NULL::BIGINT AS ${UNION_ORDER} WHERE FALSE)`;
  }
  const branches = segments.map(
    (s, i) => `SELECT *, ${s.ingestOrder} + ${i * SEGMENT_ROWS} AS ${UNION_ORDER} FROM ${s.table}`,
  );
  return `(${branches.join(' UNION ALL BY NAME ')})`;
}

/** An expression over {@link sourceSql} that orders its rows as they were ingested. */
export function ingestOrder(ctx: QueryContext): string {
  const segments = ctx.bound.tables;
  return segments.length === 1 ? (segments[0] as { ingestOrder: string }).ingestOrder : UNION_ORDER;
}

/**
 * A DuckDB result value as a number (or null). An infinite sum stays infinite: the engine
 * refuses such an answer rather than show `null` or 0 (`plan/number-rule.ts`).
 */
export function toNumber(value: DuckDBValue): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number') return value;
  return Number(value);
}
