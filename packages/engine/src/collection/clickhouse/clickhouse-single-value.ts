import { type Envelope, type TimeWindow, valueKey } from '@analytics-chart/protocol';
import { ClickHouseParams } from '../../storage/clickhouse/clickhouse-params.ts';
import type { ClickHouseRun } from '../../storage/clickhouse/clickhouse-run.ts';
import { boundField } from '../bind/bound-query.ts';
import type { ClickHouseBoundQuery } from '../bind/clickhouse/bind-clickhouse-query.ts';
import { emptyValue } from '../plan/collection-plan.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import { aggregateSql, readAggregate } from './clickhouse-aggregate-sql.ts';
import { inWindow, rowsOf, source } from './clickhouse-events.ts';
import { numericFieldSql, stringFieldSql } from './clickhouse-fields.ts';

/** Single Value: `[{"<value key>": n}]`, and the same over the compare window when asked. */
export async function clickHouseSingleValue(
  bound: ClickHouseBoundQuery,
  run: ClickHouseRun,
): Promise<Envelope> {
  const { query } = bound;
  const { window, compare } = bound.windows;
  const key = valueKey(query.aggregation, query.metric);
  const one = async (w: TimeWindow) => [{ [key]: (await aggregateWindow(bound, w, run)).value }];
  const envelope: Envelope = { result: await one(window), metadata: {} };
  if (compare) envelope.compare_result = await one(compare);
  return envelope;
}

/** The aggregate over a window; over the events that have the split field when `withSplit`. */
export async function aggregateWindow(
  bound: ClickHouseBoundQuery,
  window: TimeWindow,
  run: ClickHouseRun,
  withSplit = false,
): Promise<{ value: number | null }> {
  const { query } = bound;
  const empty = emptyValue(query.aggregation);
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return { value: empty };
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
  return { value: readAggregate(query.aggregation, rows[0]?.v ?? null) ?? empty };
}
