/**
 * SQL mode of the engine: `sql_query` requests run against one workspace's collections under a
 * lock-down enforced by DuckDB, with ClickHouse-style functions as macros. See `SQL.md`.
 */

export { QUERY_TIMED_OUT } from '../../engine-error.ts';
export { MAX_RESULT_BYTES, OUT_OF_MEMORY, RESULT_TOO_LARGE } from '../result-limits.ts';
export { RAW_PARAMETERS_REFUSED } from './bind-sql-parameters.ts';
export { CLICKHOUSE_FUNCTIONS } from './clickhouse-macros.ts';
export { CATALOG_REFUSED, FILE_ACCESS_REFUSED } from './inspect-sql-ast.ts';
export {
  DEFAULT_SQL_TIMEOUT_MS,
  runSqlQuery,
  type SqlRunOptions,
} from './run-sql-query.ts';
export { defaultSqlGate, SqlGate } from './sql-gate.ts';
export type { SqlWorkspace } from './sql-workspace.ts';
