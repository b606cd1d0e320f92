import type { CollectionQuery, ResolvedWindows } from '@analytics-chart/protocol';
import type { DuckDBValue } from '@duckdb/node-api';
import type { CollectionEntry, Segment } from '../../storage/duckdb/catalog.ts';
import { ingestOrderSql } from '../../storage/duckdb/cluster-rows.ts';
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
  const segments = ctx.entry?.segments ?? [];
  if (segments.length === 1) return (segments[0] as { table: string }).table;
  if (segments.length === 0) {
    return `(SELECT NULL::BIGINT AS "timestamp", NULL::VARCHAR AS "json", NULL::BIGINT AS ${UNION_ORDER} WHERE FALSE)`;
  }
  const branches = segments.map(
    (s, i) =>
      `SELECT *, ${ingestOrderSql(s)} + ${i * SEGMENT_ROWS} AS ${UNION_ORDER} FROM ${s.table}`,
  );
  return `(${branches.join(' UNION ALL BY NAME ')})`;
}

/** An expression over {@link sourceSql} that orders its rows as they were ingested. */
export function ingestOrder(ctx: QueryContext): string {
  const segments = ctx.entry?.segments ?? [];
  return segments.length === 1 ? ingestOrderSql(segments[0] as Segment) : UNION_ORDER;
}

/** Runs a statement on a reader connection and returns its rows. */
export async function queryRows(
  ctx: QueryContext,
  sql: string,
  params: SqlParams,
): Promise<DuckDBValue[][]> {
  return ctx.db.read((conn) => readPrepared(conn, sql, params), ctx.timeoutMs);
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
