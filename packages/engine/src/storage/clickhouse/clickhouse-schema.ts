import { DEFAULT_COLLECTION } from '@analytics-chart/protocol';
import { payloadColumnsSql } from './clickhouse-readable-json.ts';
import { clickHouseStringLiteral, quoteClickHouseIdentifier } from './clickhouse-sql-text.ts';

export { clickHouseStringLiteral, quoteClickHouseIdentifier };

/**
 * The ClickHouse storage model: one database per workspace holding one event table for all of
 * its collections, the collection catalog, and one view per collection for SQL mode. Every
 * statement here is fixed text plus quoted identifiers; collection names travel as bound
 * parameters everywhere except in view names and view bodies, where they are quoted.
 */

/** The event table of a workspace database. */
export const EVENTS_TABLE = '_engine_events';
/**
 * The event table's column holding when ClickHouse wrote each event's block (`DEFAULT now64(3)`),
 * which rollup builds divide the events by (`clickhouse-rollup-fill.ts`).
 */
export const INSERTED_COLUMN = '_inserted';
/**
 * {@link INSERTED_COLUMN}'s definition with `defaultValue`: the clock for a table's inserts, or
 * 0 while an older table's events are given theirs (`clickhouse-rollup-fill.ts`).
 */
export function insertedColumnSql(defaultValue: 'now64(3)' | '0'): string {
  return `${quoteClickHouseIdentifier(INSERTED_COLUMN)} DateTime64(3, 'UTC') DEFAULT ${defaultValue} CODEC(Delta, ZSTD(1))`;
}
/** The collection catalog of a workspace database. */
export const COLLECTIONS_TABLE = '_engine_collections';
/** The rollup table of a workspace database (`clickhouse-rollups.ts`). */
export const ROLLUPS_TABLE = '_engine_rollup_15m';
/** The materialized view that fills it. */
export const ROLLUPS_VIEW = rollupViewName(ROLLUPS_TABLE);
/** The materialized view that fills rollup table `name`. */
export function rollupViewName(name: string): string {
  return `${name}_mv`;
}
const OWN_TABLES = new Set([EVENTS_TABLE, COLLECTIONS_TABLE, ROLLUPS_TABLE, ROLLUPS_VIEW]);
/**
 * Collection names that would collide with the engine's own tables, the rollup tables it adds
 * by itself (`clickhouse-rollup-addition.ts`) included.
 */
export const RESERVED_NAMES: { has(name: string): boolean } = {
  has: (name) => OWN_TABLES.has(name) || name.startsWith(`${ROLLUPS_TABLE}_`),
};
/** The view SQL mode's `FROM base` reads unless a collection is named `base`. */
export const BASE_VIEW = 'base';

/** The database of a workspace: `<prefix><workspace>` (workspace names are `[A-Za-z0-9_-]`). */
export function workspaceDatabase(prefix: string, workspace: string): string {
  return `${prefix}${workspace}`;
}

/**
 * The DDL that creates a workspace's database and tables (idempotent). `timestamp` is Unix
 * seconds as in SQL mode; `json` is the payload exactly as ingested, beside the columns that read
 * it as ClickHouse's JSON functions can (`clickhouse-readable-json.ts`); `seq` orders events
 * within a second as they were ingested, and {@link INSERTED_COLUMN} says when they were
 * written. The sort key leads with the collection, then time, so every query of one collection
 * over a window reads one contiguous range. Inserts carry a deduplication token, which a
 * non-replicated MergeTree honours only with a window.
 */
export function workspaceSchema(database: string): string[] {
  const db = quoteClickHouseIdentifier(database);
  return [
    `CREATE DATABASE IF NOT EXISTS ${db}`,
    `CREATE TABLE IF NOT EXISTS ${db}.${quoteClickHouseIdentifier(EVENTS_TABLE)} (
  collection LowCardinality(String),
  timestamp Int64,
  seq Int64,
  json String CODEC(ZSTD(1)),
  ${payloadColumnsSql().join(',\n  ')},
  ${insertedColumnSql('now64(3)')}
) ENGINE = MergeTree
ORDER BY (collection, timestamp)
SETTINGS non_replicated_deduplication_window = 10000`,
    `CREATE TABLE IF NOT EXISTS ${db}.${quoteClickHouseIdentifier(COLLECTIONS_TABLE)} (
  name String,
  created DateTime64(3, 'UTC') DEFAULT now64(3)
) ENGINE = ReplacingMergeTree(created)
ORDER BY name`,
    // Replaced by the collection's own view if one is ever named `base`.
    `CREATE VIEW IF NOT EXISTS ${db}.${quoteClickHouseIdentifier(BASE_VIEW)} AS
SELECT timestamp, json FROM ${db}.${quoteClickHouseIdentifier(EVENTS_TABLE)}
WHERE collection = ${clickHouseStringLiteral(DEFAULT_COLLECTION)}`,
    // The default collection is a table before its first event, as on DuckDB.
    `CREATE VIEW IF NOT EXISTS ${db}.${quoteClickHouseIdentifier(DEFAULT_COLLECTION)} AS
SELECT timestamp, json FROM ${db}.${quoteClickHouseIdentifier(EVENTS_TABLE)}
WHERE collection = ${clickHouseStringLiteral(DEFAULT_COLLECTION)}`,
  ];
}

/**
 * The SQL-mode view of a collection: a table named after it with exactly `timestamp` and
 * `json`. `base` is the default collection unless a collection is really named `base`.
 */
export function collectionView(database: string, viewName: string, collection: string): string {
  const db = quoteClickHouseIdentifier(database);
  return `CREATE OR REPLACE VIEW ${db}.${quoteClickHouseIdentifier(viewName)} AS
SELECT timestamp, json FROM ${db}.${quoteClickHouseIdentifier(EVENTS_TABLE)}
WHERE collection = ${clickHouseStringLiteral(collection)}`;
}
