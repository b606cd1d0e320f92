import { join } from 'node:path';

/**
 * Hand-written ClickHouse SQL for `pnpm bench engine`: the benchmark's five queries over a table
 * loaded from the same NDJSON file, in the layout that serves them best (typed `event` and
 * `price` beside the payload, sorted by `(event, timestamp)`). Run in process by ClickHouse as a
 * library (`chdb`), and over HTTP on the ClickHouse the engine's own ClickHouse driver is served
 * from, with the same statements.
 */

/** ClickHouse in process and how to load and ask its table. */
export interface ClickHouseBaseline {
  /** (Re)creates the table from `file` and merges it into one part; resolves with the seconds taken. */
  load(file: string): Promise<number>;
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

/** The table the statements read. */
export const CLICKHOUSE_TABLE = `CREATE TABLE events (
  timestamp Int64, event LowCardinality(String), price Nullable(Float64), json String
) ENGINE = MergeTree ORDER BY (event, timestamp)`;

/** A ClickHouse string literal. */
export function clickHouseString(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** Fills `events` from `file` (NDJSON lines `{"timestamp": …, "json": {…}}`). */
export function clickHouseInsert(file: string): string {
  return `INSERT INTO events
    SELECT timestamp, JSONExtractString(json, 'event'), JSONExtract(json, 'price', 'Nullable(Float64)'), json
    FROM file(${clickHouseString(file)}, 'JSONEachRow', 'timestamp Int64, json String')
    SETTINGS input_format_json_read_objects_as_strings = 1`;
}

/**
 * Opens ClickHouse in process on a chdb data directory under `dir`, or returns undefined where
 * chdb has no library for the platform.
 */
export async function openClickHouseBaseline(dir: string): Promise<ClickHouseBaseline | undefined> {
  let chdb: typeof import('chdb');
  try {
    chdb = await import('chdb');
  } catch {
    return undefined;
  }
  const session = new chdb.Session(join(dir, 'chdb'));
  // The same two threads the engine and the DuckDB floor get.
  await session.queryAsync('SET max_threads = 2');
  return {
    load: async (file) => {
      await session.queryAsync('DROP TABLE IF EXISTS events SYNC');
      await session.queryAsync(CLICKHOUSE_TABLE);
      const started = performance.now();
      await session.queryAsync(clickHouseInsert(file));
      await session.queryAsync('OPTIMIZE TABLE events FINAL');
      return (performance.now() - started) / 1000;
    },
    query: async (sql) => (await session.queryAsync(sql, { format: 'JSONCompactEachRow' })).text(),
    close: () => session.close(),
  };
}
