import { type Envelope, type TimeWindow, valueKey } from '@analytics-chart/protocol';
import { emptyValue } from '../plan/collection-plan.ts';
import { readAggregate } from '../plan/exact-sum.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import { aggregateSql } from './aggregate-sql.ts';
import { and, type QueryContext, windowSql } from './collection-relation.ts';

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
  const { bound } = ctx;
  const params = { ...bound.params };
  const rows = await ctx.run({
    sql: `SELECT ${aggregateSql(ctx.query.aggregation, bound.metricSql)} FROM ${bound.relation}
     WHERE ${and(windowSql(window, params), bound.where.filters)}`,
    params,
  });
  return readAggregate(ctx.query.aggregation, rows[0]?.[0] ?? null) ?? empty;
}
