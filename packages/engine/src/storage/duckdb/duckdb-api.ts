import { createRequire } from 'node:module';
import type * as Api from '@duckdb/node-api';

/**
 * The values the engine takes from `@duckdb/node-api`, loaded with `require` because an ES
 * import of this CommonJS package makes Node lex every one of its files for named exports at
 * each process start. Types come from the package with `import type`, which leaves nothing at
 * run time. The benchmark takes its DuckDB from here too, so its floor runs on the engine's build.
 */
const api: typeof Api = createRequire(import.meta.url)('@duckdb/node-api');

// Classes and enums are both a value and a type: each is re-exported as both.
export const DuckDBInstance = api.DuckDBInstance;
export type DuckDBInstance = Api.DuckDBInstance;
export const DuckDBTypeId = api.DuckDBTypeId;
export type DuckDBTypeId = Api.DuckDBTypeId;
export const StatementType: typeof Api.StatementType = api.StatementType;
export type StatementType = Api.StatementType;
export const DuckDBArrayValue = api.DuckDBArrayValue;
export type DuckDBArrayValue = Api.DuckDBArrayValue;
export const DuckDBBlobValue = api.DuckDBBlobValue;
export type DuckDBBlobValue = Api.DuckDBBlobValue;
export const DuckDBDateValue = api.DuckDBDateValue;
export type DuckDBDateValue = Api.DuckDBDateValue;
export const DuckDBDecimalValue = api.DuckDBDecimalValue;
export type DuckDBDecimalValue = Api.DuckDBDecimalValue;
export const DuckDBListValue = api.DuckDBListValue;
export type DuckDBListValue = Api.DuckDBListValue;
export const DuckDBMapValue = api.DuckDBMapValue;
export type DuckDBMapValue = Api.DuckDBMapValue;
export const DuckDBStructValue = api.DuckDBStructValue;
export type DuckDBStructValue = Api.DuckDBStructValue;
export const DuckDBTimestampMillisecondsValue = api.DuckDBTimestampMillisecondsValue;
export type DuckDBTimestampMillisecondsValue = Api.DuckDBTimestampMillisecondsValue;
export const DuckDBTimestampNanosecondsValue = api.DuckDBTimestampNanosecondsValue;
export type DuckDBTimestampNanosecondsValue = Api.DuckDBTimestampNanosecondsValue;
export const DuckDBTimestampSecondsValue = api.DuckDBTimestampSecondsValue;
export type DuckDBTimestampSecondsValue = Api.DuckDBTimestampSecondsValue;
export const DuckDBTimestampTZValue = api.DuckDBTimestampTZValue;
export type DuckDBTimestampTZValue = Api.DuckDBTimestampTZValue;
export const DuckDBTimestampValue = api.DuckDBTimestampValue;
export type DuckDBTimestampValue = Api.DuckDBTimestampValue;
export const DuckDBUnionValue = api.DuckDBUnionValue;
export type DuckDBUnionValue = Api.DuckDBUnionValue;

export const {
  BIGINT,
  BOOLEAN,
  DATE,
  DOUBLE,
  HUGEINT,
  INTEGER,
  LIST,
  MAP,
  SQLNULL,
  TIMESTAMPTZ,
  UINTEGER,
  VARCHAR,
  dateValue,
  listValue,
  mapValue,
  quotedString,
  timestampTZValue,
} = api;
