import type { CollectionQuery } from '@analytics-chart/protocol';
import type { ClickHouseParams } from '../../storage/clickhouse/clickhouse-params.ts';
import { type ClickHouseRun, clickHouseSettings } from '../../storage/clickhouse/clickhouse-run.ts';
import {
  EVENTS_TABLE,
  quoteClickHouseIdentifier,
} from '../../storage/clickhouse/clickhouse-schema.ts';
import { filtersSql } from './clickhouse-fields.ts';

/** The workspace's events table, schema-qualified and quoted. */
export function source(run: ClickHouseRun): string {
  return `${quoteClickHouseIdentifier(run.database)}.${quoteClickHouseIdentifier(EVENTS_TABLE)}`;
}

/** A query's collection, the seconds `lo`…`hi` and its filters, as one condition. */
export function inWindow(
  query: CollectionQuery,
  lo: number,
  hi: number,
  params: ClickHouseParams,
): string {
  return `collection = ${params.add('String', query.collection)}
    AND timestamp BETWEEN ${params.add('Int64', lo)} AND ${params.add('Int64', hi)}
    AND ${filtersSql(query.filters, params)}`;
}

/** Runs a statement under the engine's limits and returns its rows as objects. */
export async function rowsOf<T>(
  run: ClickHouseRun,
  sql: string,
  params: ClickHouseParams,
): Promise<T[]> {
  const result = await run.client.query({
    query: sql,
    format: 'JSONEachRow',
    query_params: params.values,
    clickhouse_settings: {
      ...clickHouseSettings(run),
      output_format_json_quote_64bit_integers: 0,
      output_format_json_quote_denormals: 0,
    },
  });
  return result.json<T>();
}
