import { type Envelope, LIMITS, valueKey } from '@analytics-chart/protocol';
import { BIGINT } from '../../storage/duckdb/duckdb-api.ts';
import { emptyValue } from '../plan/collection-plan.ts';
import { readAggregate } from '../plan/exact-sum.ts';
import { byValueThenName, rankCandidatesSql } from '../plan/split-series.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import { aggregateOrderSql, aggregateSql } from './aggregate-sql.ts';
import { and, type QueryContext, windowSql } from './collection-relation.ts';

const CAPS = { Table: LIMITS.table, 'Bar Chart': LIMITS.bar, 'Pie Chart': LIMITS.pie } as const;

/**
 * Table, Bar Chart and Pie Chart: `{"<split field>": "<value>", "<value key>": n}` per split
 * value, largest first (ties by name, nulls last), capped at 2,000 / 50 / 10 rows. Events
 * without the split field are left out.
 */
export async function categoriesEnvelope(ctx: QueryContext): Promise<Envelope> {
  const { query } = ctx;
  const splitField = query.split ?? '';
  const { bound } = ctx;
  const key = valueKey(query.aggregation, query.metric);
  const cap = CAPS[query.graph_type as keyof typeof CAPS] ?? LIMITS.table;
  const { lo, hi } = windowSeconds(ctx.windows.window);
  if (lo > hi) return { result: [], metadata: {} };
  const split = bound.splitSql;
  if (split === null) return { result: [], metadata: {} };
  const m = bound.metricSql ?? 'NULL::DOUBLE';
  const params = { ...bound.params, cap: { value: cap, type: BIGINT } };
  const order = aggregateOrderSql(query.aggregation, 'm');
  const rows = await ctx.run({
    sql: rankCandidatesSql(
      'sp, v',
      `SELECT sp, ${aggregateSql(query.aggregation, 'm')} AS v, ${order.key} AS o, ${order.slack} AS e FROM (
         SELECT ${split} AS sp, ${m} AS m FROM ${bound.relation}
         WHERE ${and(windowSql(ctx.windows.window, params), bound.where.filters)}
       ) WHERE sp IS NOT NULL
       GROUP BY sp`,
      '$cap',
    ),
    params,
  });
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
