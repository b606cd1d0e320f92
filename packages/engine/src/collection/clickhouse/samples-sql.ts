import { LIMITS } from '@analytics-chart/protocol';
import type { ClickHouseBoundQuery } from '../bind/clickhouse/bind-clickhouse-query.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import type { ClickHouseStatement } from './clickhouse-statement.ts';
import { and } from './conditions-sql.ts';

/**
 * The render stage of Samples on ClickHouse: statements whose rows are `[timestamp, json]`,
 * events exactly as ingested with the filters applied, newest first (or oldest with
 * `Ascending`), in ingest order within a second, as DuckDB's `samples-sql.ts` orders them. From
 * the bound query alone. Pure: no key columns, no client.
 */

/** A page's statement: the first `LIMITS.samples + 1` events of the window; none where no whole second fits in it. */
export function samplesSql(bound: ClickHouseBoundQuery): ClickHouseStatement | null {
  const { lo, hi } = windowSeconds(bound.windows.window);
  if (lo > hi) return null;
  return samplesRangeSql(bound, lo, hi, LIMITS.samples + 1);
}

/** The first `limit` events of seconds `from`…`to` in the page's order. */
export function samplesRangeSql(
  bound: ClickHouseBoundQuery,
  from: number,
  to: number,
  limit: number,
): ClickHouseStatement {
  const ascending = bound.query.order === 'Ascending';
  const direction = ascending ? 'ASC' : 'DESC';
  const params = { ...bound.params, lo: from, hi: to, n: limit };
  const n = '{n:UInt32}';
  const inWindow = and(
    bound.inCollection,
    'timestamp BETWEEN {lo:Int64} AND {hi:Int64}',
    bound.where.filters,
  );
  // The page's last second first, from the sort key alone (ClickHouse reads `timestamp` in
  // order and stops; ordering by `seq` too would read and sort the whole window), then the
  // rows up to it in full order.
  const edge = `(SELECT ${ascending ? 'max' : 'min'}(timestamp) FROM (
       SELECT timestamp FROM ${bound.relation} WHERE ${inWindow}
       ORDER BY timestamp ${direction} LIMIT ${n}))`;
  const [lo, hi] = ascending ? ['timestamp', edge] : [edge, 'timestamp'];
  const sql = `SELECT timestamp, json FROM ${bound.relation}
     WHERE ${inWindow} AND ${lo} <= ${hi}
     ORDER BY timestamp ${direction}, seq ${direction} LIMIT ${n}`;
  return { sql, params, text: [1], parts: [] };
}
