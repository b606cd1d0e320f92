/**
 * `@analytics-chart/engine`: the Data Query API on embedded DuckDB. See README.md for the
 * storage design, the semantics it implements and the benchmark figures.
 */
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
export { WorkspaceDb } from './storage/workspace-db.ts';
