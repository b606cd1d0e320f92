import { type Envelope, LIMITS, valueKey } from '@analytics-chart/protocol';
import { SqlParams } from '../../storage/duckdb/sql-params.ts';
import { emptyValue } from '../plan/collection-plan.ts';
import { byValueThenName, rankCandidatesSql } from '../plan/split-series.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import { aggregateOrderSql, aggregateSql, readAggregate } from './aggregate-sql.ts';
import type { QueryContext } from './collection-relation.ts';
import { fields, metricSql } from './field-sql.ts';
import { and, whereFilters, windowSql } from './filter-sql.ts';

const CAPS = { Table: LIMITS.table, 'Bar Chart': LIMITS.bar, 'Pie Chart': LIMITS.pie } as const;

/**
 * Table, Bar Chart and Pie Chart: `{"<split field>": "<value>", "<value key>": n}` per split
 * value, largest first (ties by name, nulls last), capped at 2,000 / 50 / 10 rows. Events
 * without the split field are left out.
 */
export async function categoriesEnvelope(ctx: QueryContext): Promise<Envelope> {
  const { query } = ctx;
  const splitField = query.split ?? '';
  const key = valueKey(query.aggregation, query.metric);
  const cap = CAPS[query.graph_type as keyof typeof CAPS] ?? LIMITS.table;
  const { lo, hi } = windowSeconds(ctx.windows.window);
  if (lo > hi) return { result: [], metadata: {} };
  const params = new SqlParams();
  const split = fields(ctx, params)(splitField).string;
  if (split === null) return { result: [], metadata: {} };
  const m = metricSql(ctx, params) ?? 'NULL::DOUBLE';
  const order = aggregateOrderSql(query.aggregation, 'm');
  const rows = await ctx.run(
    rankCandidatesSql(
      'sp, v',
      `SELECT sp, ${aggregateSql(query.aggregation, 'm')} AS v, ${order.key} AS o, ${order.slack} AS e FROM (
         SELECT ${split} AS sp, ${m} AS m FROM ${ctx.bound.relation}
         WHERE ${and(windowSql(ctx.windows.window, params), whereFilters(ctx, query.filters, params))}
       ) WHERE sp IS NOT NULL
       GROUP BY sp`,
      params.integer(cap),
    ),
    params,
  );
  const empty = emptyValue(query.aggregation);
  // SQL keeps every row that may rank among the first `cap`; their exact values order them.
  const ranked = rows
    .map(([sp, v]) => ({
      name: String(sp),
      value: readAggregate(query.aggregation, v ?? null) ?? empty,
    }))
    .sort(byValueThenName)
    .slice(0, cap);
  return {
    result: ranked.map(({ name, value }) => ({ [splitField]: name, [key]: value })),
    metadata: {},
  };
}
