/**
 * SQL mode's result vocabulary, shared by both drivers: a result table is written in DuckDB's
 * types and values, so that one definition shapes rows, labels times and refuses columns. The
 * ClickHouse driver translates its results into it (`clickhouse/clickhouse-sql-result.ts`).
 */
export {
  BIGINT,
  BOOLEAN,
  DATE,
  DOUBLE,
  dateValue,
  HUGEINT,
  INTEGER,
  LIST,
  listValue,
  MAP,
  mapValue,
  SQLNULL,
  TIMESTAMPTZ,
  timestampTZValue,
  VARCHAR,
} from '../storage/duckdb/duckdb-api.ts';
