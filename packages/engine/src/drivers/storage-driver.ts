import type { Envelope, SqlQuery } from '@analytics-chart/protocol';
import type { CollectionAnswer, CollectionPlan } from '../collection/plan/collection-plan.ts';
import type { IngestBatch } from '../storage/ingest-batch.ts';
import type { StorageFailure } from '../storage/storage-failure.ts';

/** The limits one query runs under. */
export interface QueryLimits {
  /** The engine's clock, Unix seconds (SQL mode's `now()`). */
  now: number;
  /** Interrupts the query after this long (504). */
  timeoutMs: number;
}

/**
 * One workspace as a storage driver keeps it. The front has authenticated and parsed the
 * request; the driver runs it on its storage.
 */
export interface DriverWorkspace {
  /** Answers a collection-mode query from its plan (windows resolved by the front). */
  queryCollection(plan: CollectionPlan, limits: QueryLimits): Promise<CollectionAnswer>;
  /** Answers a SQL-mode query under the driver's lock-down. */
  querySql(query: SqlQuery, limits: QueryLimits): Promise<Envelope>;
  /** Stores a batch; resolves only once the events are durable. */
  ingest(batch: IngestBatch): Promise<void>;
  /** The names of the workspace's collections. */
  collectionNames(): Promise<string[]>;
}

/**
 * Where the engine keeps its workspaces: embedded DuckDB (`drivers/duckdb/`) or ClickHouse
 * (`drivers/clickhouse/`). The engine front (`engine.ts`) does the rest of every request.
 */
export interface StorageDriver {
  /** Every configured workspace, open, by name. */
  readonly workspaces: ReadonlyMap<string, DriverWorkspace>;
  /** Which of the failures the engine answers for `error` is, or undefined for another. */
  describeFailure(error: unknown): StorageFailure | undefined;
  /** Waits for pending writes, then releases the storage. */
  close(): Promise<void>;
}
