import {
  bindSqlParameters,
  replaceSqlPlaceholders,
  type SqlParameter,
} from '@analytics-chart/protocol';

/** Thrown for a value no literal can carry the same way in every SQL dialect the edge may reach. */
export class SqlLiteralError extends Error {
  override name = 'SqlLiteralError';
}

/**
 * The one escaping function: a checked parameter as a SQL literal of its type, for a service
 * whose API has no bind parameters. Text goes between single quotes with each quote doubled,
 * which ClickHouse and DuckDB read the same way; a backslash (an escape in ClickHouse, a plain
 * character in DuckDB) or NUL is refused rather than guessed at. Numbers are wrapped in
 * parentheses so a minus sign can never join the text before it into a comment (`--`); Float64
 * carries an exponent so both dialects read a double. Dates and instants are built by functions
 * both dialects have.
 */
export function sqlLiteral(parameter: SqlParameter): string {
  const { type, value } = parameter;
  switch (type) {
    case 'String':
      if (typeof value !== 'string') break;
      if (value.includes('\\') || value.includes('\u0000')) {
        throw new SqlLiteralError(
          'a String parameter holding a backslash or NUL cannot be sent as a literal',
        );
      }
      return `'${value.replaceAll("'", "''")}'`;
    case 'Int64':
    case 'UInt32':
      if (!/^-?\d+$/.test(String(value))) break;
      return `(${value})`;
    case 'Float64':
      if (typeof value !== 'number' || !Number.isFinite(value)) break;
      return `(${value.toExponential()})`;
    case 'Date':
      if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) break;
      return `CAST('${value}' AS DATE)`;
    case 'DateTime':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) break;
      return `toDateTime(${value})`;
  }
  throw new SqlLiteralError(`a ${type} parameter has a value of the wrong kind`);
}

/**
 * A request body with its SQL parameters written into the SQL as literals and `parameters`
 * removed, for a backend without bind parameters. Bodies without parameters come back as they are.
 */
export function inlineSqlParameters(body: Record<string, unknown>): Record<string, unknown> {
  if (body.parameters === undefined || typeof body.sql_query !== 'string') return body;
  const bound = bindSqlParameters(body.sql_query, body.parameters as Record<string, unknown>);
  if (!bound.ok) throw new SqlLiteralError(bound.error);
  const { parameters: _, ...rest } = body;
  const { placeholders, parameters } = bound.value;
  return {
    ...rest,
    sql_query: replaceSqlPlaceholders(body.sql_query, placeholders, (p) =>
      sqlLiteral(parameters[p.name] as SqlParameter),
    ),
  };
}
