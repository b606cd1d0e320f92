/**
 * `@analytics-chart/engine`: the Data Query API on embedded DuckDB. See README.md for the
 * storage design, the semantics it implements and the benchmark figures.
 */

export {
  type DemoDataOptions,
  type DemoDataResult,
  type DemoEvent,
  demoEventObjects,
  demoEvents,
  generateDemoData,
} from './demo/generate-demo-data.ts';
export type { ClickHouseOptions } from './drivers/clickhouse/clickhouse-driver.ts';
export {
  type CollectionsAnswer,
  createEngine,
  type Engine,
  type EngineOptions,
  type EngineResponse,
  type IngestAnswer,
} from './engine.ts';
export { EngineError } from './engine-error.ts';
export { createEngineApp } from './http/create-engine-app.ts';
export { type ServedEngine, type ServeEngineOptions, serveEngine } from './http/serve-engine.ts';
export type { BadLine } from './ingest/append-events.ts';
export {
  type LoadOptions,
  type LoadProgress,
  type LoadResult,
  loadNdjson,
} from './ingest/load-ndjson.ts';
export { defaultParseWorkers, NdjsonParsers } from './ingest/ndjson-parsers.ts';
export { WorkspaceDb } from './storage/duckdb/workspace-db.ts';
