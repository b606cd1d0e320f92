/**
 * `@analytics-chart/engine/internals`: the few engine parts the repository's benchmark builds its
 * baselines from, so that they run on the engine's own DuckDB build, storage format and zone
 * offsets. Not a stable API: it follows the engine's internals and may change in any release.
 */

export { type OffsetSegment, offsetSegments } from './collection/plan/time-buckets.ts';
export { STORAGE_VERSION } from './storage/duckdb/db-config.ts';
export { DuckDBInstance, quotedString } from './storage/duckdb/duckdb-api.ts';
