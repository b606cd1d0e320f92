import {
  findSqlPlaceholders,
  replaceSqlPlaceholders,
  type SqlParameter,
  type SqlQuery,
} from '@analytics-chart/protocol';
import type { DuckDBPreparedStatement, DuckDBType, DuckDBValue } from '@duckdb/node-api';
import { EngineError } from '../../engine-error.ts';
import {
  BIGINT,
  DATE,
  DOUBLE,
  dateValue,
  TIMESTAMPTZ,
  timestampTZValue,
  UINTEGER,
  VARCHAR,
} from '../../storage/duckdb/duckdb-api.ts';

/**
 * The SQL DuckDB parses for a request: each `{name:Type}` placeholder becomes the named
 * parameter `$name`, so the value is bound later and never becomes SQL text. The protocol has
 * already checked that every placeholder has a value of its type.
 */
export function sqlWithParameters(query: SqlQuery): string {
  if (!query.parameters) return query.sql_query;
  const found = findSqlPlaceholders(query.sql_query);
  if (!found.ok) throw new EngineError(400, found.error);
  return replaceSqlPlaceholders(query.sql_query, found.placeholders, (p) => `$${p.name}`);
}

/** A checked parameter as a DuckDB value and type (DateTime is an instant, as `toDateTime` returns). */
function toDuckDB(parameter: SqlParameter): [DuckDBValue, DuckDBType] {
  const { type, value } = parameter;
  switch (type) {
    case 'String':
      return [String(value), VARCHAR];
    case 'Int64':
      return [BigInt(value), BIGINT];
    case 'UInt32':
      return [Number(value), UINTEGER];
    case 'Float64':
      return [Number(value), DOUBLE];
    case 'Date':
      return [dateValue(Date.parse(`${value}T00:00:00Z`) / 86_400_000), DATE];
    case 'DateTime':
      return [timestampTZValue(BigInt(value) * 1_000_000n), TIMESTAMPTZ];
  }
}

/** The answer to parameters written in DuckDB's own syntax, which nothing would bind. */
export const RAW_PARAMETERS_REFUSED =
  'SQL mode takes parameters only as {name:Type} placeholders with values in parameters ($1, ? and $name are refused)';

/**
 * Binds the request's parameters to the prepared statement by name. The statement's own
 * parameters must be exactly the request's: a `$1` or `?` written in the SQL, or a `$name` no
 * placeholder produced, is refused rather than left unbound.
 */
export function bindParameters(prepared: DuckDBPreparedStatement, query: SqlQuery): void {
  const parameters = query.parameters ?? {};
  const names = Object.keys(parameters);
  if (prepared.parameterCount === 0 && names.length === 0) return;
  const expected = new Set(names);
  for (let i = 1; i <= prepared.parameterCount; i++) {
    if (!expected.delete(prepared.parameterName(i))) {
      throw new EngineError(400, RAW_PARAMETERS_REFUSED);
    }
  }
  if (expected.size > 0) throw new EngineError(400, 'A SQL parameter could not be bound');
  const values: Record<string, DuckDBValue> = {};
  const types: Record<string, DuckDBType> = {};
  for (const [name, parameter] of Object.entries(parameters)) {
    [values[name], types[name]] = toDuckDB(parameter);
  }
  prepared.bind(values, types);
}
