import { type Envelope, type TimeWindow, valueKey } from '@analytics-chart/protocol';
import { SqlParams } from '../../storage/duckdb/sql-params.ts';
import { emptyValue } from '../plan/collection-plan.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import { aggregateSql, readAggregate } from './aggregate-sql.ts';
import type { QueryContext } from './collection-relation.ts';
import { metricSql } from './field-sql.ts';
import { and, whereFilters, windowSql } from './filter-sql.ts';

/** Single Value: `[{"<value key>": n}]`, and the same over the compare window when asked. */
export async function singleValueEnvelope(ctx: QueryContext): Promise<Envelope> {
  const key = valueKey(ctx.query.aggregation, ctx.query.metric);
  const value = async (window: TimeWindow) => [{ [key]: await aggregateWindow(ctx, window) }];
  const envelope: Envelope = { result: await value(ctx.windows.window), metadata: {} };
  if (ctx.windows.compare) envelope.compare_result = await value(ctx.windows.compare);
  return envelope;
}

async function aggregateWindow(ctx: QueryContext, window: TimeWindow): Promise<number | null> {
  const empty = emptyValue(ctx.query.aggregation);
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return empty;
  const params = new SqlParams();
  const m = metricSql(ctx, params);
  const rows = await ctx.run(
    `SELECT ${aggregateSql(ctx.query.aggregation, m)} FROM ${ctx.bound.relation}
     WHERE ${and(windowSql(window, params), whereFilters(ctx, ctx.query.filters, params))}`,
    params,
  );
  return readAggregate(ctx.query.aggregation, rows[0]?.[0] ?? null) ?? empty;
}
