import type {
  DuckDBConnection,
  DuckDBMaterializedResult,
  DuckDBPreparedStatement,
  DuckDBValue,
} from '@duckdb/node-api';
import { DuckDBListValue, DuckDBStructValue } from './duckdb-api.ts';
import { type NamedParams, SqlParams } from './sql-params.ts';

/**
 * A value of a read row as plain JavaScript: a struct as an object and a list as an array (of
 * plain values), every other value as DuckDB's client hands it over, so that the stages after
 * run read rows without the client's classes.
 */
export type PlainValue =
  | DuckDBValue
  | readonly PlainValue[]
  | { readonly [key: string]: PlainValue };

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
): Promise<PlainValue[][]> {
  return materializedRows(await runPrepared(conn, sql, params));
}

/** Every row of a materialized result, in order, as plain values. */
function materializedRows(result: DuckDBMaterializedResult): PlainValue[][] {
  const rows: PlainValue[][] = [];
  const chunks = result.chunkCount;
  for (let c = 0; c < chunks; c++) {
    const chunk = result.getChunk(c);
    const width = chunk.columnCount;
    const height = chunk.rowCount;
    const first = rows.length;
    for (let r = 0; r < height; r++) rows.push(new Array<PlainValue>(width));
    for (let col = 0; col < width; col++) {
      const vector = chunk.getColumnVector(col);
      for (let r = 0; r < height; r++) {
        const item = vector.getItem(r);
        (rows[first + r] as PlainValue[])[col] =
          typeof item === 'object' && item !== null ? plainValue(item) : item;
      }
    }
  }
  return rows;
}

function plainValue(value: DuckDBValue): PlainValue {
  if (value instanceof DuckDBStructValue) {
    const out: Record<string, PlainValue> = {};
    for (const [key, entry] of Object.entries(value.entries)) out[key] = plainValue(entry);
    return out;
  }
  if (value instanceof DuckDBListValue) return value.items.map(plainValue);
  return value;
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
