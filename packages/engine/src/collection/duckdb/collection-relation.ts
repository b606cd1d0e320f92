import type { CollectionQuery, ResolvedWindows, TimeWindow } from '@analytics-chart/protocol';
import { BIGINT } from '../../storage/duckdb/duckdb-api.ts';
import type { PlainValue } from '../../storage/duckdb/prepared-statements.ts';
import type { NamedParams, Statement } from '../../storage/duckdb/sql-params.ts';
import type { DuckDbBoundQuery } from '../bind/duckdb/bind-duckdb-query.ts';
import { windowSeconds } from '../plan/time-buckets.ts';

/** Runs one statement and returns its rows: the run stage, under the query's time limit. */
export type RunStatement = (statement: Statement) => Promise<PlainValue[][]>;

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
export function toNumber(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return value;
  return Number(value);
}

/**
 * `timestamp` within a window (both ends exclusive), as whole seconds, with its ends as the
 * parameters `$lo` and `$hi` of `params`.
 */
export function windowSql(window: TimeWindow, params: NamedParams): string {
  const { lo, hi } = windowSeconds(window);
  params.lo = { value: lo, type: BIGINT };
  params.hi = { value: hi, type: BIGINT };
  return `"timestamp" BETWEEN $lo AND $hi`;
}

/** `a AND b`, leaving out conditions that are plainly TRUE. */
export function and(...conditions: string[]): string {
  const kept = conditions.filter((c) => c !== 'TRUE' && c !== '(TRUE)');
  return kept.length ? kept.join(' AND ') : 'TRUE';
}
