import type {
  Aggregation,
  CollectionQuery,
  FilterGroups,
  ResolvedWindows,
  TimeWindow,
} from '@analytics-chart/protocol';
import type { DuckDBValue } from '@duckdb/node-api';
import type { CollectionEntry } from '../../storage/duckdb/catalog.ts';
import { readPrepared } from '../../storage/duckdb/prepared-statements.ts';
import type { SqlParams } from '../../storage/duckdb/sql-params.ts';
import type { WorkspaceDb } from '../../storage/duckdb/workspace-db.ts';
import { type FieldSql, fieldSql } from './field-sql.ts';
import { filtersSql } from './filter-sql.ts';
import { windowSeconds } from '../plan/time-buckets.ts';

/** Everything a collection-mode query needs once the request is parsed and resolved. */
export interface QueryContext {
  db: WorkspaceDb;
  query: CollectionQuery;
  windows: ResolvedWindows;
  /** The collection, or undefined when it has no events (answers are then empty, not errors). */
  entry: CollectionEntry | undefined;
  /** Interrupts a statement that runs longer (504). */
  timeoutMs: number;
}

/** Row ids of a later segment start this far above an earlier one's (ingest order across them). */
const SEGMENT_ROWS = 2 ** 40;

/**
 * The relation to read: the collection's table, its segments side by side (a column a segment
 * lacks reads as NULL there, which no event of that segment holds), or an empty relation of the
 * same shape.
 */
export function sourceSql(ctx: QueryContext): string {
  const segments = ctx.entry?.segments ?? [];
  if (segments.length === 1) return (segments[0] as { table: string }).table;
  if (segments.length === 0) {
    return '(SELECT NULL::BIGINT AS "timestamp", NULL::VARCHAR AS "json", NULL::BIGINT AS rowid WHERE FALSE)';
  }
  const branches = segments.map(
    (s, i) => `SELECT *, rowid + ${i * SEGMENT_ROWS} AS rowid FROM ${s.table}`,
  );
  return `(${branches.join(' UNION ALL BY NAME ')})`;
}

/** Field resolver bound to the query's collection and a statement's parameters. */
export function fields(ctx: QueryContext, params: SqlParams): (name: string) => FieldSql {
  const cache = new Map<string, FieldSql>();
  return (name) => {
    let f = cache.get(name);
    if (!f) {
      f = fieldSql(ctx.db.catalog, ctx.entry, name, params);
      cache.set(name, f);
    }
    return f;
  };
}

/** `timestamp` within a window (both ends exclusive), as whole seconds. */
export function windowSql(window: TimeWindow, params: SqlParams): string {
  const { lo, hi } = windowSeconds(window);
  return `"timestamp" BETWEEN ${params.integer(lo)} AND ${params.integer(hi)}`;
}

/** A filter list as SQL, against the query's collection (`TRUE` when there is none). */
export function whereFilters(ctx: QueryContext, groups: FilterGroups, params: SqlParams): string {
  return filtersSql(groups, fields(ctx, params), params);
}

/** `a AND b`, leaving out conditions that are plainly TRUE. */
export function and(...conditions: string[]): string {
  const kept = conditions.filter((c) => c !== 'TRUE' && c !== '(TRUE)');
  return kept.length ? kept.join(' AND ') : 'TRUE';
}

const QUANTILES: Record<string, string> = {
  P50: '0.5',
  P75: '0.75',
  P90: '0.9',
  P95: '0.95',
  P99: '0.99',
};

/**
 * The aggregate over a numeric expression `m` (ignored by Count), optionally restricted to the
 * rows where `condition` holds. Percentiles are `quantile_cont`: linear interpolation between
 * the closest ranks, as `numpy.percentile`'s default.
 */
export function aggregateSql(
  aggregation: Aggregation,
  m: string | null,
  condition = 'TRUE',
): string {
  const filter = condition === 'TRUE' ? '' : ` FILTER (WHERE ${condition})`;
  if (aggregation === 'Count') return `count(*)${filter}`;
  if (m === null) return aggregation === 'Sum' ? '0::DOUBLE' : 'NULL::DOUBLE';
  // A sum over no numeric values is 0, also where it ranks groups.
  if (aggregation === 'Sum') return `coalesce(sum(${m})${filter}, 0)`;
  if (aggregation === 'Avg') return `avg(${m})${filter}`;
  return `quantile_cont(${m}, ${QUANTILES[aggregation]})${filter}`;
}

/** The metric's numeric expression, or null when the aggregation needs none or it is missing. */
export function metricSql(ctx: QueryContext, params: SqlParams): string | null {
  if (ctx.query.aggregation === 'Count' || !ctx.query.metric) return null;
  return fields(ctx, params)(ctx.query.metric).number;
}

/** What an aggregate over no values reads as: 0 for Count and Sum, null otherwise. */
export function emptyValue(aggregation: Aggregation): number | null {
  return aggregation === 'Count' || aggregation === 'Sum' ? 0 : null;
}

/** A DuckDB result value as a JSON number (or null). */
export function toNumber(value: DuckDBValue): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  return Number(value);
}

/** Runs a statement on a reader connection and returns its rows. */
export async function queryRows(
  ctx: QueryContext,
  sql: string,
  params: SqlParams,
): Promise<DuckDBValue[][]> {
  return ctx.db.read((conn) => readPrepared(conn, sql, params), ctx.timeoutMs);
}
