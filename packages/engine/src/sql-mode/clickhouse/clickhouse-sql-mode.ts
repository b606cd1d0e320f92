import { type Envelope, LIMITS, READ_ONLY_SQL, type SqlQuery } from '@analytics-chart/protocol';
import { ClickHouseError } from '@clickhouse/client-web';
import { EngineError, QUERY_TIMED_OUT } from '../../engine-error.ts';
import { clickHouseMessage } from '../../storage/clickhouse/clickhouse-errors.ts';
import {
  clickHouseResultTable,
  RESULT_FORMAT_SETTINGS,
} from '../../storage/clickhouse/clickhouse-result.ts';
import { type ClickHouseRun, clickHouseSettings } from '../../storage/clickhouse/clickhouse-run.ts';
import type { ResultTable } from '../../storage/result-table.ts';
import { MAX_RESULT_BYTES, OUT_OF_MEMORY, RESULT_TOO_LARGE } from '../result-limits.ts';
import { shapeSqlResult } from '../shape-sql-result.ts';
import { startsAsQuery } from '../statement-kind.ts';
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

/**
 * Codes of failures that are not the query's own (ClickHouse's ErrorCodes; checked against its
 * errorCodeToName in the tests): the server, its network, its disks or replicas, or the
 * engine's own database. Every other refusal of a query that passed the engine's checks is
 * the user's SQL (a syntax error, `throwIf`, `assumeNotNull(NULL)`, a division by zero…),
 * answered as a 400 with ClickHouse's sentence; codes are read from the message's start.
 */
export const SERVER_ERROR_CODES: Record<string, string> = {
  '3': 'UNEXPECTED_END_OF_FILE',
  '49': 'LOGICAL_ERROR',
  '81': 'UNKNOWN_DATABASE',
  '173': 'CANNOT_ALLOCATE_MEMORY',
  '202': 'TOO_MANY_SIMULTANEOUS_QUERIES',
  '209': 'SOCKET_TIMEOUT',
  '210': 'NETWORK_ERROR',
  '236': 'ABORTED',
  '242': 'TABLE_IS_READ_ONLY',
  '243': 'NOT_ENOUGH_SPACE',
  '279': 'ALL_CONNECTION_TRIES_FAILED',
  '394': 'QUERY_WAS_CANCELLED',
  '999': 'KEEPER_EXCEPTION',
};

/** Codes of a query stopped at its time limit: 504. */
export const TIME_LIMIT_CODES: Record<string, string> = {
  '159': 'TIMEOUT_EXCEEDED',
};

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
  if (!startsAsQuery(sql)) {
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
  let table: ResultTable;
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
    if (!refused || SERVER_ERROR_CODES[refused.code] !== undefined) throw error;
    if (TIME_LIMIT_CODES[refused.code] !== undefined) throw new EngineError(504, QUERY_TIMED_OUT);
    if (type === 'MEMORY_LIMIT_EXCEEDED') throw new EngineError(400, OUT_OF_MEMORY);
    if (refused.message.includes('Multi-statements are not allowed')) {
      throw new EngineError(400, READ_ONLY_SQL);
    }
    if (type === 'TOO_MANY_ROWS_OR_BYTES') throw new EngineError(400, RESULT_TOO_LARGE);
    throw new EngineError(400, clickHouseMessage(refused));
  }
  return shapeSqlResult(table, query);
}
