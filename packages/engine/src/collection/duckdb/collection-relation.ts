import type { CollectionQuery, ResolvedWindows } from '@analytics-chart/protocol';
import type { DuckDBValue } from '@duckdb/node-api';
import type { CollectionEntry } from '../../storage/duckdb/catalog.ts';
import { readPrepared } from '../../storage/duckdb/prepared-statements.ts';
import type { SqlParams } from '../../storage/duckdb/sql-params.ts';
import type { WorkspaceDb } from '../../storage/duckdb/workspace-db.ts';

/** One collection-mode query on DuckDB: its plan, the workspace and the collection it reads. */
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

/** Runs a statement on a reader connection and returns its rows. */
export async function queryRows(
  ctx: QueryContext,
  sql: string,
  params: SqlParams,
): Promise<DuckDBValue[][]> {
  return ctx.db.read((conn) => readPrepared(conn, sql, params), ctx.timeoutMs);
}

/** A DuckDB result value as a JSON number (or null). */
export function toNumber(value: DuckDBValue): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  return Number(value);
}
