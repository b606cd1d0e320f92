import { payloadColumnsSql } from './clickhouse-readable-json.ts';
import {
  COLLECTIONS_TABLE,
  clickHouseStringLiteral,
  EVENTS_TABLE,
  quoteClickHouseIdentifier,
  type workspaceSchema,
} from './clickhouse-schema.ts';

/**
 * The storage model of {@link workspaceSchema} on a ClickHouse cluster, for an operator to run
 * once before the engines start (their own `CREATE … IF NOT EXISTS` then finds the tables):
 * each node keeps its shard's events in a `ReplicatedMergeTree` (`_engine_events_local`),
 * `_engine_events` is a `Distributed` table over them, so a collection larger than one machine
 * spreads over the shards and every shard scans its part of each query. Rows are sharded by
 * `(collection, seq)`, which a retried insert repeats, so a retry reaches the same shards and
 * their deduplication. The catalog is replicated whole to every node. `{cluster}`, `{shard}`
 * and `{replica}` are the server's own macros. The same columns, sort key and codecs as the
 * single-node table (the Distributed table takes the readable payload's columns from the local
 * one, so queries read them there too); ClickHouse Cloud's `SharedMergeTree` needs none of this
 * (the single-node DDL runs there as is).
 */
export function clusterSchema(database: string, cluster = '{cluster}'): string[] {
  const db = quoteClickHouseIdentifier(database);
  const lit = clickHouseStringLiteral;
  const on = `ON CLUSTER ${lit(cluster)}`;
  const local = quoteClickHouseIdentifier(`${EVENTS_TABLE}_local`);
  const events = quoteClickHouseIdentifier(EVENTS_TABLE);
  const catalog = quoteClickHouseIdentifier(COLLECTIONS_TABLE);
  return [
    `CREATE DATABASE IF NOT EXISTS ${db} ${on}`,
    `CREATE TABLE IF NOT EXISTS ${db}.${local} ${on} (
  collection LowCardinality(String),
  timestamp Int64,
  seq Int64,
  json String CODEC(ZSTD(1)),
  ${payloadColumnsSql().join(',\n  ')}
) ENGINE = ReplicatedMergeTree(${lit(`/clickhouse/tables/{shard}/${database}/${EVENTS_TABLE}`)}, '{replica}')
ORDER BY (collection, timestamp)`,
    `CREATE TABLE IF NOT EXISTS ${db}.${events} ${on} AS ${db}.${local}
ENGINE = Distributed(${lit(cluster)}, ${lit(database)}, ${lit(`${EVENTS_TABLE}_local`)}, cityHash64(collection, seq))`,
    `CREATE TABLE IF NOT EXISTS ${db}.${catalog} ${on} (
  name String,
  created DateTime64(3, 'UTC') DEFAULT now64(3)
) ENGINE = ReplicatedReplacingMergeTree(${lit(`/clickhouse/tables/all/${database}/${COLLECTIONS_TABLE}`)}, '{replica}', created)
ORDER BY name`,
  ];
}
