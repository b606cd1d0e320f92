import { type Envelope, LIMITS, READ_ONLY_SQL, type SqlQuery } from '@analytics-chart/protocol';
import { ClickHouseError } from '@clickhouse/client-web';
import { EngineError } from '../../engine-error.ts';
import { clickHouseMessage } from '../../storage/clickhouse/clickhouse-errors.ts';
import { type ClickHouseRun, clickHouseSettings } from '../../storage/clickhouse/clickhouse-run.ts';
import { MAX_RESULT_BYTES, OUT_OF_MEMORY, RESULT_TOO_LARGE } from '../result-limits.ts';
import { type SqlResultTable, shapeSqlResult } from '../shape-sql-result.ts';
import { clickHouseResultTable, RESULT_FORMAT_SETTINGS } from './clickhouse-sql-result.ts';
import { inspectClickHouseAst } from './inspect-clickhouse-ast.ts';

const AST_FORMAT = 'TabSeparatedRaw';

/**
 * ClickHouse's refusal as a ClickHouseError, also when the client could not find an exception
 * name after the message (then it hands on the text, `Code: 62. DB::Exception: …`).
 */
function asClickHouseError(error: unknown): ClickHouseError | undefined {
  if (error instanceof ClickHouseError) return error;
  if (!(error instanceof Error)) return undefined;
  const m = /^Code: (\d+)\. DB::Exception: ([\s\S]*?)(?:\s*\(version [^)]*\))?\s*$/.exec(
    error.message,
  );
  return m
    ? new ClickHouseError({ message: m[2] as string, code: m[1] as string, type: '' })
    : undefined;
}

/** White space and comments before a statement's first keyword. */
const LEADING_COMMENTS = /^(\s+|--[^\n]*(\n|$)|\/\*[\s\S]*?\*\/)*/;

/**
 * Exception names of the commonest codes of a query's own mistakes and limits (ClickHouse's ErrorCodes;
 * checked against its errorCodeToName in the tests). The client reads the name from the first
 * `(NAME)` in the message, which a quoted piece of the user's SQL can precede, and the code
 * from the message's start, which nothing precedes.
 */
export const USER_ERROR_CODES: Record<string, string> = {
  '36': 'BAD_ARGUMENTS',
  '42': 'NUMBER_OF_ARGUMENTS_DOESNT_MATCH',
  '43': 'ILLEGAL_TYPE_OF_ARGUMENT',
  '46': 'UNKNOWN_FUNCTION',
  '47': 'UNKNOWN_IDENTIFIER',
  '53': 'TYPE_MISMATCH',
  '60': 'UNKNOWN_TABLE',
  '62': 'SYNTAX_ERROR',
  '164': 'READONLY',
  '215': 'NOT_AN_AGGREGATE',
  '241': 'MEMORY_LIMIT_EXCEEDED',
};

/** Errors of the query's own SQL, answered as a 400 with ClickHouse's sentence. */
const USER_ERRORS =
  /^(SYNTAX_ERROR|UNKNOWN_.*|ILLEGAL_.*|TYPE_MISMATCH|BAD_ARGUMENTS|NUMBER_OF_ARGUMENTS_DOESNT_MATCH|READONLY|NOT_AN_AGGREGATE|CANNOT_PARSE_.*|CANNOT_CONVERT_TYPE|NO_COMMON_TYPE|AMBIGUOUS_.*|MULTIPLE_EXPRESSIONS_FOR_ALIAS|TOO_DEEP_.*|TOO_BIG_AST|QUERY_IS_TOO_LARGE|INCORRECT_.*|ARGUMENT_OUT_OF_BOUND|DUPLICATE_COLUMN|THERE_IS_NO_COLUMN|ACCESS_DENIED|FUNCTION_NOT_ALLOWED|SUPPORT_IS_DISABLED|NOT_IMPLEMENTED|TOO_MANY_ROWS_OR_BYTES)$/;

/**
 * Runs a SQL-mode query natively on ClickHouse, in ClickHouse's dialect, locked down by
 * ClickHouse: `readonly=1`, the time limit as `max_execution_time`, the row cap as the `limit`
 * setting (one row more, to know about truncation) and `max_result_rows`, `max_result_bytes`,
 * `max_memory_usage`, the workspace's database as the current one, and ClickHouse's parse
 * checked first ({@link inspectClickHouseAst}).
 */
export async function runClickHouseSql(query: SqlQuery, run: ClickHouseRun): Promise<Envelope> {
  const sql = query.sql_query.replace(/[\s;]+$/, '');
  // Statements that are not a query at all (DELETE, PRAGMA, ATTACH…) are refused as such,
  // whether or not ClickHouse's parser knows them; what passes is still parsed below.
  if (!/^(SELECT|WITH|FROM)\b|^\(/i.test(sql.replace(LEADING_COMMENTS, ''))) {
    throw new EngineError(400, READ_ONLY_SQL);
  }
  const maxRows = LIMITS.sqlRows;
  const settings = {
    ...clickHouseSettings(run),
    readonly: '1',
    limit: String(maxRows + 1),
    // Beside `limit`, which cuts the result, a ceiling ClickHouse enforces on what it sends.
    max_result_rows: String(maxRows + 1),
    max_result_bytes: String(MAX_RESULT_BYTES),
    result_overflow_mode: 'throw',
    session_timezone: query.IANA_time_zone,
    ...RESULT_FORMAT_SETTINGS,
  } as const;
  let table: SqlResultTable;
  try {
    const explained = await run.client.query({
      query: `EXPLAIN AST ${sql}`,
      format: AST_FORMAT,
      clickhouse_settings: settings,
      query_params: Object.fromEntries(
        Object.entries(query.parameters ?? {}).map(([name, p]) => [name, p.value]),
      ),
    });
    const verdict = inspectClickHouseAst(await explained.text(), run.database, AST_FORMAT);
    if (!verdict.ok) throw new EngineError(400, verdict.message);
    const result = await run.client.query({
      query: sql,
      format: 'JSONCompactEachRowWithNamesAndTypes',
      clickhouse_settings: settings,
      // The `{name:Type}` placeholders are ClickHouse's own: its binder takes the values.
      query_params: Object.fromEntries(
        Object.entries(query.parameters ?? {}).map(([name, p]) => [name, p.value]),
      ),
    });
    const text = await result.text();
    if (text.length > MAX_RESULT_BYTES) throw new EngineError(400, RESULT_TOO_LARGE);
    table = clickHouseResultTable(
      text.split('\n').filter((l) => l.length > 0),
      maxRows,
    );
  } catch (error) {
    const refused = asClickHouseError(error);
    const type = refused ? (USER_ERROR_CODES[refused.code] ?? refused.type) : '';
    if (type === 'MEMORY_LIMIT_EXCEEDED') throw new EngineError(400, OUT_OF_MEMORY);
    if (refused && USER_ERRORS.test(type ?? '')) {
      if (refused.message.includes('Multi-statements are not allowed')) {
        throw new EngineError(400, READ_ONLY_SQL);
      }
      if (type === 'TOO_MANY_ROWS_OR_BYTES') throw new EngineError(400, RESULT_TOO_LARGE);
      throw new EngineError(400, clickHouseMessage(refused));
    }
    throw error;
  }
  return shapeSqlResult(table, query);
}
