import { type Envelope, LIMITS, type TimeWindow, valueKey } from '@analytics-chart/protocol';
import { ClickHouseParams } from '../../storage/clickhouse/clickhouse-params.ts';
import type { ClickHouseRun } from '../../storage/clickhouse/clickhouse-run.ts';
import { boundField } from '../bind/bound-query.ts';
import type { ClickHouseBoundQuery } from '../bind/clickhouse/bind-clickhouse-query.ts';
import { emptyValue } from '../plan/collection-plan.ts';
import { byValueThenName, rankCandidatesSql } from '../plan/split-series.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import { aggregateOrderSql, aggregateSql, readAggregate } from './clickhouse-aggregate-sql.ts';
import { inWindow, rowsOf, source } from './clickhouse-events.ts';
import { numericFieldSql, stringFieldSql } from './clickhouse-fields.ts';

const CAPS = { Table: LIMITS.table, 'Bar Chart': LIMITS.bar, 'Pie Chart': LIMITS.pie } as const;

/**
 * Table, Bar Chart and Pie Chart: one row per string form of the split field, largest value
 * first (an empty Count or Sum reads 0; other empty values are null and last), ties by name,
 * capped at 2,000 / 50 / 10 rows. Events without the split field are left out.
 */
export async function clickHouseCategories(
  bound: ClickHouseBoundQuery,
  window: TimeWindow,
  run: ClickHouseRun,
): Promise<Envelope> {
  const { query } = bound;
  const splitField = query.split ?? '';
  const key = valueKey(query.aggregation, query.metric);
  const cap = CAPS[query.graph_type as keyof typeof CAPS] ?? LIMITS.table;
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return { result: [], metadata: {} };
  const rows = await rankSplit(bound, lo, hi, run, cap);
  return {
    result: rows.map((r) => ({ [splitField]: r.sp, [key]: r.v })),
    metadata: {},
  };
}

/**
 * The split field's string forms in the window with their aggregate, largest first (an empty
 * Count or Sum reads 0; other empty values are null and last), ties by name, at most `cap`.
 */
export async function rankSplit(
  bound: ClickHouseBoundQuery,
  lo: number,
  hi: number,
  run: ClickHouseRun,
  cap: number,
): Promise<Array<{ sp: string; v: number | null }>> {
  const params = new ClickHouseParams();
  const rows = await rowsOf<{ sp: string; v: unknown }>(
    run,
    rankingSql(bound, lo, hi, run, params, cap),
    params,
  );
  // SQL keeps every row that may rank among the first `cap`; their exact values order them.
  const { aggregation } = bound.query;
  const empty = emptyValue(aggregation);
  return rows
    .map((r) => ({ name: r.sp, value: readAggregate(aggregation, r.v) ?? empty }))
    .sort(byValueThenName)
    .slice(0, cap)
    .map((r) => ({ sp: r.name, v: r.value }));
}

/** The statement of {@link rankSplit}: rows `(sp, v)` that may rank among the first `cap`. */
export function rankingSql(
  bound: ClickHouseBoundQuery,
  lo: number,
  hi: number,
  run: ClickHouseRun,
  params: ClickHouseParams,
  cap: number,
): string {
  const { query } = bound;
  const split = stringFieldSql(boundField(bound, query.split ?? ''), params);
  const m = bound.metric === null ? 'NULL' : numericFieldSql(bound.metric, params);
  const value = aggregateSql(query.aggregation, m, params);
  const order = aggregateOrderSql(query.aggregation, m, params);
  return rankCandidatesSql(
    'sp, v',
    `SELECT ${split} AS sp, ${value} AS v, ${order.key} AS o, ${order.slack} AS e FROM ${source(run)}
     WHERE ${inWindow(bound, lo, hi, params)} AND sp IS NOT NULL
     GROUP BY sp`,
    params.add('UInt32', cap),
  );
}
