import {
  type CollectionQuery,
  type Envelope,
  type ResolvedWindows,
  type TimeWindow,
  valueKey,
} from '@analytics-chart/protocol';
import { ClickHouseParams } from '../../storage/clickhouse/clickhouse-params.ts';
import type { ClickHouseRun } from '../../storage/clickhouse/clickhouse-run.ts';
import { emptyValue } from '../plan/collection-plan.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import { aggregateSql } from './clickhouse-aggregate-sql.ts';
import { inWindow, rowsOf, source } from './clickhouse-events.ts';
import { numericFieldSql, stringFieldSql } from './clickhouse-fields.ts';

/** Single Value: `[{"<value key>": n}]`, and the same over the compare window when asked. */
export async function clickHouseSingleValue(
  query: CollectionQuery,
  windows: ResolvedWindows,
  run: ClickHouseRun,
): Promise<Envelope> {
  const { window, compare } = windows;
  const key = valueKey(query.aggregation, query.metric);
  const one = async (w: TimeWindow) => [{ [key]: (await aggregateWindow(query, w, run)).value }];
  const envelope: Envelope = { result: await one(window), metadata: {} };
  if (compare) envelope.compare_result = await one(compare);
  return envelope;
}

/** The aggregate over a window; over the events that have the split field when `withSplit`. */
export async function aggregateWindow(
  query: CollectionQuery,
  window: TimeWindow,
  run: ClickHouseRun,
  withSplit = false,
): Promise<{ value: number | null }> {
  const empty = emptyValue(query.aggregation);
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return { value: empty };
  const params = new ClickHouseParams(run.columns);
  const m = query.metric === null ? 'NULL' : numericFieldSql(query.metric, params);
  const split = withSplit ? ` AND ${stringFieldSql(query.split ?? '', params)} IS NOT NULL` : '';
  const rows = await rowsOf<{ v: number | null }>(
    run,
    `SELECT ${aggregateSql(query.aggregation, m, params)} AS v FROM ${source(run)}
     WHERE ${inWindow(query, lo, hi, params)}${split}`,
    params,
  );
  return { value: rows[0]?.v ?? empty };
}
