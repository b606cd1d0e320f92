import { type Envelope, LIMITS, READ_ONLY_SQL, type SqlQuery } from '@analytics-chart/protocol';
import { ClickHouseError } from '@clickhouse/client';
import { EngineError } from '../../engine-error.ts';
import { setOwn } from '../../set-own.ts';
import { clickHouseMessage } from '../../storage/clickhouse/clickhouse-errors.ts';
import { type ClickHouseRun, clickHouseSettings } from '../../storage/clickhouse/clickhouse-run.ts';
import { MAX_RESULT_BYTES, RESULT_TOO_LARGE } from '../result-limits.ts';
import { inspectClickHouseAst } from './inspect-clickhouse-ast.ts';

const AST_FORMAT = 'TabSeparatedRaw';

/** SQL-mode graph types answered on ClickHouse so far; the others are a 501. */
const SHAPED = new Set(['Table', 'Bar Chart', 'Pie Chart', 'Single Value']);

/** Errors of the query's own SQL, answered as a 400 with ClickHouse's sentence. */
const USER_ERRORS =
  /^(SYNTAX_ERROR|UNKNOWN_.*|ILLEGAL_.*|TYPE_MISMATCH|BAD_ARGUMENTS|NUMBER_OF_ARGUMENTS_DOESNT_MATCH|READONLY|NOT_AN_AGGREGATE|CANNOT_PARSE_.*|CANNOT_CONVERT_TYPE|NO_COMMON_TYPE|AMBIGUOUS_.*|MULTIPLE_EXPRESSIONS_FOR_ALIAS|TOO_DEEP_.*|TOO_BIG_AST|QUERY_IS_TOO_LARGE|INCORRECT_.*|ARGUMENT_OUT_OF_BOUND|DUPLICATE_COLUMN|THERE_IS_NO_COLUMN|ACCESS_DENIED|FUNCTION_NOT_ALLOWED|SUPPORT_IS_DISABLED|NOT_IMPLEMENTED|TOO_MANY_ROWS_OR_BYTES)$/;

/**
 * Runs a SQL-mode query natively on ClickHouse, in ClickHouse's dialect, locked down by
 * ClickHouse: `readonly=1`, the time limit as `max_execution_time`, the row cap as the `limit`
 * setting (one row more, to know about truncation), `max_result_bytes`, `max_memory_usage`, the
 * workspace's database as the current one, and ClickHouse's parse checked first
 * ({@link inspectClickHouseAst}).
 */
export async function runClickHouseSql(query: SqlQuery, run: ClickHouseRun): Promise<Envelope> {
  if (!SHAPED.has(query.graph_type)) {
    throw new EngineError(
      501,
      `SQL mode on ClickHouse does not answer '${query.graph_type}' yet (it answers ${[...SHAPED].join(', ')})`,
    );
  }
  const sql = query.sql_query.replace(/[\s;]+$/, '');
  const maxRows = LIMITS.sqlRows;
  const settings = {
    ...clickHouseSettings(run),
    readonly: '1',
    limit: String(maxRows + 1),
    max_result_bytes: String(MAX_RESULT_BYTES),
    result_overflow_mode: 'throw',
    session_timezone: query.IANA_time_zone,
    output_format_json_quote_64bit_integers: 0,
    output_format_json_quote_denormals: 0,
  } as const;
  let columns: string[];
  let rows: unknown[][];
  try {
    const explained = await run.client.query({
      query: `EXPLAIN AST ${sql}`,
      format: AST_FORMAT,
      clickhouse_settings: settings,
    });
    const verdict = inspectClickHouseAst(await explained.text(), run.database, AST_FORMAT);
    if (!verdict.ok) throw new EngineError(400, verdict.message);
    const result = await run.client.query({
      query: sql,
      format: 'JSONCompactEachRowWithNames',
      clickhouse_settings: settings,
    });
    const text = await result.text();
    if (text.length > MAX_RESULT_BYTES) throw new EngineError(400, RESULT_TOO_LARGE);
    const lines = text.split('\n').filter((l) => l.length > 0);
    columns = uniqueNames(JSON.parse(lines[0] ?? '[]') as string[]);
    rows = lines.slice(1).map((l) => JSON.parse(l) as unknown[]);
  } catch (error) {
    if (error instanceof ClickHouseError && USER_ERRORS.test(error.type ?? '')) {
      if (error.message.includes('Multi-statements are not allowed')) {
        throw new EngineError(400, READ_ONLY_SQL);
      }
      if (error.type === 'TOO_MANY_ROWS_OR_BYTES') throw new EngineError(400, RESULT_TOO_LARGE);
      throw new EngineError(400, clickHouseMessage(error));
    }
    throw error;
  }
  const truncated = rows.length > maxRows;
  if (truncated) rows.length = maxRows;
  if (query.graph_type === 'Table') {
    const result = rows.map((row) => {
      const out: Record<string, unknown> = {};
      columns.forEach((name, i) => {
        setOwn(out, name, row[i] ?? null);
      });
      return out;
    });
    return { result, metadata: { truncated, columns } };
  }
  const label = columnOf(columns, 'label_column', query.label_column);
  const value = columnOf(columns, 'value_column', query.value_column);
  const labelKey = columns[label] as string;
  const valueKey = columns[value] as string;
  const shaped = rows.map((row) => {
    const out: Record<string, unknown> = {};
    setOwn(out, labelKey, labelText(row[label]));
    setOwn(out, valueKey, chartNumber(row[value], query.value_column as string));
    return out;
  });
  return {
    result: query.graph_type === 'Single Value' ? shaped.slice(0, 1) : shaped,
    metadata: { truncated },
  };
}

/** Column names made unique as SQL mode's rows need them (`a`, `a:1`). */
function uniqueNames(names: string[]): string[] {
  const seen = new Map<string, number>();
  return names.map((name) => {
    const n = seen.get(name) ?? 0;
    seen.set(name, n + 1);
    return n === 0 ? name : `${name}:${n}`;
  });
}

function columnOf(columns: string[], field: string, wanted: string | null): number {
  const exact = columns.indexOf(wanted ?? '');
  if (exact >= 0) return exact;
  const folded = columns.findIndex((c) => c.toLowerCase() === (wanted ?? '').toLowerCase());
  if (folded >= 0) return folded;
  throw new EngineError(
    400,
    `${field} '${wanted}' is not a column of the query's result (its columns: ${columns.join(', ')})`,
  );
}

function labelText(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function chartNumber(value: unknown, column: string): number | null {
  if (value === null) return null;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string' && /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(value)) {
    return Number(value);
  }
  throw new EngineError(
    400,
    `value_column '${column}' must hold numbers, but the query returns ${typeof value === 'string' ? 'text' : 'other values'} there`,
  );
}
