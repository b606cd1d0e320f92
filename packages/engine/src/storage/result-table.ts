/**
 * A query's result in the engine's own terms, free of any driver's types: each driver converts
 * its answers into it (`duckdb/duckdb-result.ts`, `clickhouse/clickhouse-result.ts`), so that SQL
 * mode shapes rows, labels times and refuses columns with one definition whatever the database.
 */

/**
 * What a column holds, as shaping reads it:
 * - `number`: numbers, and integers beyond a double's exact range as `bigint`;
 * - `boolean`, `text`, and `json` (JSON text, parsed in table cells);
 * - `null`: a column of NULLs only;
 * - `instant`: moments as Unix milliseconds, shown in the request's time zone;
 * - `wall-clock`: readings (timestamps without a zone, dates) as milliseconds of a UTC clock;
 * - `other`: anything else, already as JSON can carry it (text, arrays, objects).
 * A time cell the clock cannot place (an infinite timestamp) is the database's text for it.
 */
export type ResultKind =
  | 'number'
  | 'boolean'
  | 'text'
  | 'json'
  | 'null'
  | 'instant'
  | 'wall-clock'
  | 'other';

/** One value of a result: JavaScript values only. */
export type ResultCell =
  | null
  | boolean
  | number
  | bigint
  | string
  | ResultCell[]
  | { [key: string]: ResultCell };

/** A result column: its name (made unique, `a`, `a:1`), kind, and its type as the database names it. */
export interface ResultColumn {
  name: string;
  kind: ResultKind;
  /** The database's name for the column's type, for messages that refuse the column. */
  typeName: string;
}

/** What a SQL query returned, cut at the row cap: the rows shaping works on. */
export interface ResultTable {
  columns: ResultColumn[];
  /** One cell per column, in column order. */
  rows: ResultCell[][];
  /** True when the query had more rows than the cap. */
  truncated: boolean;
}
