import type {
  DuckDBConnection,
  DuckDBMaterializedResult,
  DuckDBPreparedStatement,
  DuckDBValue,
} from '@duckdb/node-api';
import { type NamedParams, SqlParams } from './sql-params.ts';

/**
 * Prepared statements kept per connection, keyed by their SQL text, because planning anew the
 * same wide INSERT (one expression per typed column) or the same query shape (values are
 * parameters) is a large share of a small batch's or a fast query's time.
 * The text holds only generated identifiers and `$n` placeholders, so equal texts are equal
 * statements; values are bound on each run. When the catalog changes, DuckDB rebinds a
 * prepared statement by itself; a column list change gives a new text, hence a new statement.
 */

/** Statements kept per connection; the least recently used one goes first. */
const KEPT = 16;

const caches = new WeakMap<DuckDBConnection, Map<string, Promise<DuckDBPreparedStatement>>>();

/**
 * Runs `sql` with `params` on `conn` through a cached prepared statement. A statement that
 * fails is dropped from the cache, so an error never sticks to later runs.
 */
export function runPrepared(
  conn: DuckDBConnection,
  sql: string,
  params: SqlParams | NamedParams,
): Promise<DuckDBMaterializedResult> {
  return withPrepared(conn, sql, params, (statement) => statement.run());
}

/**
 * {@link runPrepared}, returning the whole result as rows of values. The result is already
 * materialized when the run resolves, so its chunks are read synchronously, column by column,
 * because the reader's own chunk fetches each take a round trip through Node's thread pool and
 * its row-by-row reading looks up the column count and each vector's type once per value.
 */
export async function readPrepared(
  conn: DuckDBConnection,
  sql: string,
  params: SqlParams | NamedParams,
): Promise<DuckDBValue[][]> {
  return materializedRows(await runPrepared(conn, sql, params));
}

/** Every row of a materialized result, in order. */
function materializedRows(result: DuckDBMaterializedResult): DuckDBValue[][] {
  const rows: DuckDBValue[][] = [];
  const chunks = result.chunkCount;
  for (let c = 0; c < chunks; c++) {
    const chunk = result.getChunk(c);
    const width = chunk.columnCount;
    const height = chunk.rowCount;
    const first = rows.length;
    for (let r = 0; r < height; r++) rows.push(new Array<DuckDBValue>(width));
    for (let col = 0; col < width; col++) {
      const vector = chunk.getColumnVector(col);
      for (let r = 0; r < height; r++) (rows[first + r] as DuckDBValue[])[col] = vector.getItem(r);
    }
  }
  return rows;
}

async function withPrepared<T>(
  conn: DuckDBConnection,
  sql: string,
  params: SqlParams | NamedParams,
  run: (statement: DuckDBPreparedStatement) => Promise<T>,
): Promise<T> {
  let cache = caches.get(conn);
  if (!cache) {
    cache = new Map();
    caches.set(conn, cache);
  }
  let statement = cache.get(sql);
  if (statement) cache.delete(sql);
  else statement = conn.prepare(sql);
  // Re-inserted last: Map order is the eviction order.
  cache.set(sql, statement);
  while (cache.size > KEPT) {
    const [oldest, evicted] = cache.entries().next().value as [
      string,
      Promise<DuckDBPreparedStatement>,
    ];
    cache.delete(oldest);
    evicted.then((s) => s.destroySync()).catch(() => undefined);
  }
  try {
    const prepared = await statement;
    if (params instanceof SqlParams) prepared.bind(params.values, params.types);
    else {
      // Named: each name the statement holds, so that unused parameters are left out.
      const named = params;
      for (let i = 1; i <= prepared.parameterCount; i++) {
        const param = named[prepared.parameterName(i)];
        if (!param) throw new Error(`parameter $${prepared.parameterName(i)} has no value`);
        prepared.bindValue(i, param.value, param.type);
      }
    }
    return await run(prepared);
  } catch (error) {
    if (cache.get(sql) === statement) cache.delete(sql);
    statement.then((s) => s.destroySync()).catch(() => undefined);
    throw error;
  }
}
