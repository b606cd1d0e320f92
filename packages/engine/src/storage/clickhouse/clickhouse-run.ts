import type { ClickHouseClient } from '@clickhouse/client-web';
import type { KeyColumnLookup } from './clickhouse-key-columns.ts';
import type { ClickHouseRollupLookup } from './clickhouse-rollups.ts';

/** What one query on ClickHouse needs: the workspace's client and database, and its limits. */
export interface ClickHouseRun {
  /** A client whose current database is the workspace's. */
  client: ClickHouseClient;
  database: string;
  /** The engine's clock, Unix seconds. */
  now: number;
  timeoutMs: number;
  /** DuckDB-style size (`'1GB'`, `'512MB'`), applied as `max_memory_usage`. */
  memoryLimit: string;
  /** The payload key columns collection-mode queries may read (none: every field from the JSON). */
  columns?: KeyColumnLookup;
  /** The workspace's rollups, where it keeps them (`clickhouse-rollups.ts`). */
  rollups?: ClickHouseRollupLookup;
  /** False where no projection can serve the query, so ClickHouse does not weigh any. */
  projections?: boolean;
  /** A projection ClickHouse reads the query from where it holds the query's columns. */
  preferredProjection?: string;
}

const UNITS: Record<string, number> = {
  B: 1,
  KB: 1e3,
  MB: 1e6,
  GB: 1e9,
  TB: 1e12,
  KIB: 1024,
  MIB: 1024 ** 2,
  GIB: 1024 ** 3,
  TIB: 1024 ** 4,
};

/** The settings every engine query on ClickHouse carries: its time and memory limits. */
export function clickHouseSettings(run: ClickHouseRun) {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$/.exec(run.memoryLimit);
  const bytes = match ? Number(match[1]) * (UNITS[(match[2] || 'B').toUpperCase()] ?? 1) : 1e9;
  return {
    max_execution_time: Math.max(1, Math.ceil(run.timeoutMs / 1000)),
    timeout_overflow_mode: 'throw',
    max_memory_usage: String(Math.floor(bytes)),
    ...(run.projections === false ? { optimize_use_projections: 0 as const } : {}),
    ...(run.preferredProjection === undefined
      ? {}
      : { preferred_optimize_projection_name: run.preferredProjection }),
  } as const;
}
