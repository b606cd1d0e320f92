import type { Envelope, TimeWindow } from '@analytics-chart/protocol';
import { ClickHouseParams } from '../../storage/clickhouse/clickhouse-params.ts';
import type { ClickHouseRun } from '../../storage/clickhouse/clickhouse-run.ts';
import { boundField } from '../bind/bound-query.ts';
import type { ClickHouseBoundQuery } from '../bind/clickhouse/bind-clickhouse-query.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import { singleValueEnvelope } from '../shape/single-value-shape.ts';
import { aggregateSql, readAggregate } from './clickhouse-aggregate-sql.ts';
import { inWindow, rowsOf, source } from './clickhouse-events.ts';
import { numericFieldSql, stringFieldSql } from './clickhouse-fields.ts';

/**
 * Single Value: the aggregate over the window, and over the compare window when asked, shaped by
 * `shape/single-value-shape.ts`.
 */
export async function clickHouseSingleValue(
  bound: ClickHouseBoundQuery,
  run: ClickHouseRun,
): Promise<Envelope> {
  const { window, compare } = bound.windows;
  const main = await aggregateWindow(bound, window, run);
  const second = compare ? await aggregateWindow(bound, compare, run) : null;
  return singleValueEnvelope(bound.query, main, second, readAggregate);
}

/**
 * The rows of the aggregate over a window (one, or none where no whole second fits in it); over
 * the events that have the split field when `withSplit`.
 */
export async function aggregateWindow(
  bound: ClickHouseBoundQuery,
  window: TimeWindow,
  run: ClickHouseRun,
  withSplit = false,
): Promise<unknown[][]> {
  const { query } = bound;
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return [];
  const params = new ClickHouseParams();
  const m = bound.metric === null ? 'NULL' : numericFieldSql(bound.metric, params);
  const split = withSplit
    ? ` AND ${stringFieldSql(boundField(bound, query.split ?? ''), params)} IS NOT NULL`
    : '';
  const rows = await rowsOf<{ v: unknown }>(
    run,
    `SELECT ${aggregateSql(query.aggregation, m, params)} AS v FROM ${source(run)}
     WHERE ${inWindow(bound, lo, hi, params)}${split}`,
    params,
  );
  return rows.map((r) => [r.v]);
}
