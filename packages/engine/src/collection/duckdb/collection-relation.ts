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
