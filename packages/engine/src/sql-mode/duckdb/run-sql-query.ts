import {
  DEFAULT_COLLECTION,
  type Envelope,
  LIMITS,
  READ_ONLY_SQL,
  type SqlQuery,
} from '@analytics-chart/protocol';
import type { DuckDBConnection, DuckDBPreparedStatement, DuckDBValue } from '@duckdb/node-api';
import { EngineError, QUERY_TIMED_OUT } from '../../engine-error.ts';
import {
  BIGINT,
  DuckDBArrayValue,
  DuckDBBlobValue,
  DuckDBListValue,
  DuckDBMapValue,
  DuckDBStructValue,
  StatementType,
  VARCHAR,
} from '../../storage/duckdb/duckdb-api.ts';
import { duckDBResultColumns, duckDBResultRow } from '../../storage/duckdb/duckdb-result.ts';
import type { ResultCell, ResultTable } from '../../storage/result-table.ts';
import { MAX_RESULT_BYTES, RESULT_TOO_LARGE } from '../result-limits.ts';
import { shapeSqlResult } from '../shape-sql-result.ts';
import { startsAsOtherStatement } from '../statement-kind.ts';
import { bindParameters, sqlWithParameters } from './bind-sql-parameters.ts';
import { macroStatementsFor, NOW_VARIABLE, ZONE_VARIABLE } from './clickhouse-macros.ts';
import { collectionViewStatements } from './collection-views.ts';
import { describeDuckDBError } from './describe-duckdb-error.ts';
import { inspectSqlAst } from './inspect-sql-ast.ts';
import { defaultSqlGate, type SqlGate } from './sql-gate.ts';
import type { SqlWorkspace } from './sql-workspace.ts';

/** The time limit of a SQL-mode query unless the engine is configured otherwise. */
export const DEFAULT_SQL_TIMEOUT_MS = 10_000;

/** Options of one SQL-mode run. */
export interface SqlRunOptions {
  /** Time limit in milliseconds (default 10 000), from the request's arrival to its last row. */
  timeoutMs?: number;
  /** The current instant in Unix seconds, for `now()` and `today()` (default: the clock). */
  now?: number;
  /** The collection `FROM base` reads when no collection is named `base` (default `all_events`). */
  baseCollection?: string;
  /** The process-wide cap on concurrent SQL queries (default {@link defaultSqlGate}). */
  gate?: SqlGate;
  /** Row cap (default 2,000, the spec's limit); more rows set `metadata.truncated`. */
  maxRows?: number;
  /** Result size cap in bytes (default {@link MAX_RESULT_BYTES}); more is a 400. */
  maxBytes?: number;
}

/**
 * Runs a SQL-mode query against one workspace and shapes the rows into the response envelope.
 * The query must get past four layers, each enforced by DuckDB itself: its own parser decides
 * there is one SELECT touching only collections and allowed functions; the instance's
 * configuration forbids files, network and settings; the statement runs in a READ ONLY
 * transaction on a connection of its own; and every table name resolves to a temporary view over
 * a collection of this workspace. Refusals are `EngineError`s: 400 with one sentence, 504
 * `Query timed out` at the time limit.
 */
export async function runSqlQuery(
  workspace: SqlWorkspace,
  query: SqlQuery,
  options: SqlRunOptions = {},
): Promise<Envelope> {
  // DuckDB's C API reads SQL up to the first NUL: refuse it, so every layer sees the same text.
  if (query.sql_query.includes('\u0000')) {
    throw new EngineError(400, 'The SQL query contains a NUL character');
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_SQL_TIMEOUT_MS;
  const arrived = performance.now();
  const release = await (options.gate ?? defaultSqlGate).enter(timeoutMs);
  if (!release) throw new EngineError(504, QUERY_TIMED_OUT);
  try {
    const remaining = Math.max(1, timeoutMs - (performance.now() - arrived));
    const table = await readWithinLimit(workspace, query, options, remaining);
    return shapeSqlResult(table, query);
  } finally {
    release();
  }
}

async function readWithinLimit(
  workspace: SqlWorkspace,
  query: SqlQuery,
  options: SqlRunOptions,
  timeoutMs: number,
): Promise<ResultTable> {
  const connection = await workspace.connect();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    connection.interrupt();
  }, timeoutMs);
  // The timer can fire between two DuckDB calls, when there is nothing to interrupt.
  const checkTime = () => {
    if (timedOut) throw new EngineError(504, QUERY_TIMED_OUT);
  };
  try {
    return await readLocked(connection, workspace, query, options, checkTime);
  } catch (error) {
    if (timedOut) throw new EngineError(504, QUERY_TIMED_OUT);
    if (error instanceof EngineError) throw error;
    throw describeDuckDBError(error);
  } finally {
    clearTimeout(timer);
    connection.closeSync();
  }
}

async function readLocked(
  connection: DuckDBConnection,
  workspace: SqlWorkspace,
  query: SqlQuery,
  options: SqlRunOptions,
  checkTime: () => void,
): Promise<ResultTable> {
  // Placeholders become named parameters: values are bound below, never written into the SQL.
  const sql = sqlWithParameters(query);
  // Statements that are not a query (SHOW, DESCRIBE, ClickHouse's OPTIMIZE…) get the one
  // read-only sentence, not DuckDB's parse error.
  if (startsAsOtherStatement(sql)) throw new EngineError(400, READ_ONLY_SQL);
  // Layer 1: DuckDB's parser. The SQL travels as a bound parameter, never as SQL text.
  const parsed = await connection.runAndReadAll(
    'SELECT json_serialize_sql($1::VARCHAR)',
    [sql],
    [VARCHAR],
  );
  checkTime();
  const verdict = inspectSqlAst(String(parsed.getRows()[0]?.[0] ?? ''));
  if (!verdict.ok) throw new EngineError(verdict.status, verdict.message);

  // Layer 4: the only tables the query can name are temporary views over this workspace.
  const collections = await workspace.collections();
  checkTime();
  const setup = [
    ...collectionViewStatements(
      verdict.tables,
      collections,
      options.baseCollection ?? DEFAULT_COLLECTION,
    ),
    ...macroStatementsFor(verdict.functions),
  ];
  if (setup.length > 0) await connection.run(setup.join(';\n'));
  await connection.run(`SET VARIABLE ${ZONE_VARIABLE} = $1`, [query.IANA_time_zone], [VARCHAR]);
  const now = BigInt(Math.floor(options.now ?? Date.now() / 1000));
  await connection.run(`SET VARIABLE ${NOW_VARIABLE} = $1`, [now], [BIGINT]);
  checkTime();

  // Layer 3: a read-only transaction; layer 1 again on the statement DuckDB will really run.
  await connection.run('BEGIN TRANSACTION READ ONLY');
  let prepared: DuckDBPreparedStatement | undefined;
  try {
    const extracted = await connection.extractStatements(sql);
    if (extracted.count !== 1) throw new EngineError(400, READ_ONLY_SQL);
    prepared = await extracted.prepare(0);
    checkTime();
    if (prepared.statementType !== StatementType.SELECT) throw new EngineError(400, READ_ONLY_SQL);
    bindParameters(prepared, query);
    return await readCapped(
      prepared,
      options.maxRows ?? LIMITS.sqlRows,
      options.maxBytes ?? MAX_RESULT_BYTES,
      checkTime,
    );
  } finally {
    prepared?.destroySync();
    await connection.run('ROLLBACK').catch(() => undefined);
  }
}

/** Streams at most `maxRows + 1` rows: enough to know about truncation, never the whole result. */
async function readCapped(
  prepared: DuckDBPreparedStatement,
  maxRows: number,
  maxBytes: number,
  checkTime: () => void,
): Promise<ResultTable> {
  const result = await prepared.stream();
  checkTime();
  const columns = duckDBResultColumns(result.deduplicatedColumnNames(), result.columnTypes());
  const rows: ResultCell[][] = [];
  let bytes = 0;
  reading: while (rows.length <= maxRows) {
    const chunk = await result.fetchChunk();
    checkTime();
    if (!chunk || chunk.rowCount === 0) break;
    // Row by row, so a chunk of huge values is refused before it all becomes JavaScript strings.
    for (let i = 0; i < chunk.rowCount; i++) {
      const row = chunk.getRowValues(i);
      for (const value of row) bytes += estimateBytes(value);
      if (bytes > maxBytes) throw new EngineError(400, RESULT_TOO_LARGE);
      rows.push(duckDBResultRow(row, columns));
      if (rows.length > maxRows) break reading;
    }
  }
  const truncated = rows.length > maxRows;
  if (truncated) rows.length = maxRows;
  return { columns, rows, truncated };
}

/** A rough size of a value once in JSON: enough to stop a runaway result early. */
function estimateBytes(value: DuckDBValue): number {
  if (value === null || typeof value === 'boolean' || typeof value === 'number') return 8;
  if (typeof value === 'string') return value.length + 2;
  if (typeof value === 'bigint') return 24;
  if (value instanceof DuckDBListValue || value instanceof DuckDBArrayValue) {
    let total = 2;
    for (const item of value.items) total += estimateBytes(item) + 1;
    return total;
  }
  if (value instanceof DuckDBStructValue) {
    let total = 2;
    for (const [key, item] of Object.entries(value.entries))
      total += key.length + 4 + estimateBytes(item);
    return total;
  }
  if (value instanceof DuckDBMapValue) {
    let total = 2;
    for (const entry of value.entries)
      total += estimateBytes(entry.key) + estimateBytes(entry.value) + 2;
    return total;
  }
  if (value instanceof DuckDBBlobValue) return value.bytes.length * 4;
  return 32;
}
