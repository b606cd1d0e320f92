import { join } from 'node:path';

/**
 * The ClickHouse column of `pnpm bench engine`: the benchmark's five queries as hand-written
 * ClickHouse SQL, run in process by ClickHouse as a library (`chdb`) on a table loaded from the
 * same NDJSON file, in the layout that serves them best (typed `event` and `price` beside the
 * payload, sorted by `(event, timestamp)`). What the engine's ClickHouse driver would be measured
 * against on the same ClickHouse.
 */

/** A loaded table and how to ask it. */
export interface ClickHouseBaseline {
  /** Seconds the load took. */
  loadSeconds: number;
  /** Runs one statement and reads its whole answer. */
  query(sql: string): Promise<string>;
  close(): void;
}

/** The five benchmark queries over the window `lo`…`hi` (Unix seconds, inclusive). */
export const CLICKHOUSE_SQL: Array<(w: { lo: number; hi: number }) => string> = [
  ({ lo, hi }) =>
    `SELECT toDate(toDateTime(timestamp, 'America/Los_Angeles')) AS d, count() FROM events WHERE timestamp BETWEEN ${lo} AND ${hi} GROUP BY d`,
  ({ lo, hi }) =>
    `SELECT event, intDiv(timestamp, 3600) AS h, count() FROM events WHERE timestamp BETWEEN ${lo} AND ${hi} GROUP BY event, h`,
  ({ lo, hi }) =>
    `SELECT sum(price) FROM events WHERE event = 'purchase' AND timestamp BETWEEN ${lo} AND ${hi}`,
  ({ lo, hi }) =>
    `SELECT quantileExactInclusive(0.95)(price) FROM events WHERE timestamp BETWEEN ${lo} AND ${hi}`,
  ({ lo, hi }) =>
    `SELECT timestamp, json FROM events WHERE timestamp BETWEEN ${lo} AND ${hi} ORDER BY timestamp DESC LIMIT 50`,
];

/**
 * Loads `file` (NDJSON lines `{"timestamp": …, "json": {…}}`) into a MergeTree table in a chdb
 * data directory under `dir`, or returns undefined where chdb has no library for the platform.
 */
export async function loadClickHouseBaseline(
  file: string,
  dir: string,
): Promise<ClickHouseBaseline | undefined> {
  let chdb: typeof import('chdb');
  try {
    chdb = await import('chdb');
  } catch {
    return undefined;
  }
  const session = new chdb.Session(join(dir, 'chdb'));
  // The same two threads the engine and the DuckDB floor get.
  await session.queryAsync('SET max_threads = 2');
  await session.queryAsync(`CREATE TABLE events (
    timestamp Int64, event LowCardinality(String), price Nullable(Float64), json String
  ) ENGINE = MergeTree ORDER BY (event, timestamp)`);
  const started = performance.now();
  const quoted = `'${file.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  await session.queryAsync(`INSERT INTO events
    SELECT timestamp, JSONExtractString(json, 'event'), JSONExtract(json, 'price', 'Nullable(Float64)'), json
    FROM file(${quoted}, 'JSONEachRow', 'timestamp Int64, json String')
    SETTINGS input_format_json_read_objects_as_strings = 1`);
  await session.queryAsync('OPTIMIZE TABLE events FINAL');
  const loadSeconds = (performance.now() - started) / 1000;
  return {
    loadSeconds,
    query: async (sql) => (await session.queryAsync(sql, { format: 'JSONCompactEachRow' })).text(),
    close: () => session.close(),
  };
}
