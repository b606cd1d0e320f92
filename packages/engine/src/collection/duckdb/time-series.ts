import {
  type Envelope,
  LIMITS,
  type ResolvedGranularity,
  type TimeWindow,
  valueKey,
} from '@analytics-chart/protocol';
import { SqlParams } from '../../storage/duckdb/sql-params.ts';
import { type LineAnswer, lineEnvelope } from '../line-windows.ts';
import { calendarUnits, UNIT_SHIFT } from '../plan/calendar-units.ts';
import { emptyValue, isAdditive } from '../plan/collection-plan.ts';
import { ExactSum, type SumParts, sumOfParts } from '../plan/exact-sum.ts';
import { rollupRead } from '../plan/rollup-eligibility.ts';
import { MAX_SPLIT_CELLS } from '../plan/split-series.ts';
import { type Bucket, planBuckets, windowSeconds } from '../plan/time-buckets.ts';
import {
  type LineRow,
  lineRows,
  rankSeries,
  ratioOf,
  runningValues,
  splitRows,
} from '../shape/line-shape.ts';
import {
  aggregateOrderSql,
  aggregateSql,
  readAggregate,
  readSumParts,
  sumPartsSql,
} from './aggregate-sql.ts';
import { bucketKeySql } from './bucket-key-sql.ts';
import { type QueryContext, toNumber } from './collection-relation.ts';
import { fields, metricSql } from './field-sql.ts';
import { and, whereFilters, windowSql, windowWhere } from './filter-sql.ts';
import { rollupCountSql } from './rollup-sql.ts';

/**
 * The time-series graph types: Single, Multi, Stacked, Cumulative, Ratio and Compare Line. Each
 * window is one statement that groups by an integer bucket key. The whole-window value
 * (`combined`) of Count and Sum is the sum of the buckets; Avg and percentiles get theirs from the
 * same scan through GROUPING SETS, computed over the window rather than from the buckets.
 */

/** Per-bucket values of one population, with event counts (for `hideMissing`). */
interface Series {
  values: (number | null)[];
  counts: number[];
  combined: number | null;
}

interface WindowResult {
  buckets: Bucket[];
  series: Series[];
}

function bucketsOf(ctx: QueryContext, window: TimeWindow, granularity: ResolvedGranularity) {
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return null;
  return planBuckets(granularity, ctx.query.IANA_time_zone, lo, hi);
}

/**
 * Aggregates each population (a SQL condition within the base filter) per bucket of `window`.
 * `build` adds the base condition and the populations' conditions to the statement's params.
 */
async function aggregateWindow(
  ctx: QueryContext,
  window: TimeWindow,
  granularity: ResolvedGranularity,
  build: (params: SqlParams) => { where: string; populations: string[] },
): Promise<WindowResult> {
  const plan = bucketsOf(ctx, window, granularity);
  const params = new SqlParams();
  const { where, populations } = build(params);
  const empty = emptyValue(ctx.query.aggregation);
  const series: Series[] = populations.map(() => ({
    values: plan ? plan.buckets.map(() => empty) : [],
    counts: plan ? plan.buckets.map(() => 0) : [],
    combined: empty,
  }));
  if (!plan || plan.buckets.length === 0) return { buckets: [], series };
  const m = metricSql(ctx, params);
  const { aggregation } = ctx.query;
  // Count and Sum over the window are the sums of their buckets: one GROUP BY suffices. Avg and
  // percentiles need the window as a whole, which GROUPING SETS adds to the same scan.
  const additive = isAdditive(aggregation);
  // Sums of buckets are also sums of spans of UTC time within them, keyed by a division alone.
  const { lo, hi } = windowSeconds(window);
  // Where rollups give the events' answer, the window reads them (`plan/rollup-eligibility.ts`).
  const kept = ctx.bound.rollup;
  const rollup =
    kept &&
    rollupRead({
      aggregation,
      conditions: [where, ...populations],
      plan,
      lo,
      hi,
      spanSeconds: kept.spanSeconds,
    });
  const units = additive && !rollup ? calendarUnits(plan, lo, hi) : undefined;
  const key = units
    ? `(("timestamp" + ${params.integer(UNIT_SHIFT)}) // ${params.integer(units.seconds)})`
    : bucketKeySql(plan, '"timestamp"', params);
  // Count's value is its own event count; other aggregations count events beside the value.
  const columns = populations.map((condition, i) =>
    aggregation === 'Count'
      ? `${aggregateSql(aggregation, m, condition)} AS v${i}`
      : `${aggregateSql(aggregation, m, condition)} AS v${i}, ${aggregateSql('Count', null, condition)} AS c${i}`,
  );
  const width = aggregation === 'Count' ? 1 : 2;
  // The rollup statement binds its own parameters: the ones above belong to the raw one.
  const rollupParams = new SqlParams();
  const rows =
    kept && rollup
      ? await ctx.run(
          rollupCountSql(plan, rollup, kept, ctx.bound.relation, rollupParams, populations.length),
          rollupParams,
        )
      : await ctx.run(
          `SELECT ${key} AS k, ${columns.join(', ')}
     FROM ${ctx.bound.relation} WHERE ${and(windowSql(window, params), where)}
     GROUP BY ${additive ? 'k' : 'GROUPING SETS ((k), ())'}`,
          params,
        );
  const index = new Map(plan.buckets.map((b, i) => [b.key, i]));
  // A Sum's buckets and total add its exact parts up, rounding once each (`plan/exact-sum.ts`).
  const sums =
    aggregation === 'Sum' ? series.map(() => plan.buckets.map(() => new ExactSum())) : null;
  for (const row of rows) {
    const k = toNumber(row[0] ?? null);
    const i =
      k === null
        ? undefined
        : index.get(units ? units.bucketOf(k - UNIT_SHIFT / units.seconds) : k);
    if (units && i === undefined) throw new Error(`time unit ${k} is not in the bucket plan`);
    series.forEach((s, p) => {
      const cell = row[1 + width * p] ?? null;
      const value = normalize(ctx, readAggregate(aggregation, cell));
      const count = toNumber(row[width + width * p] ?? null) ?? 0;
      if (k === null) s.combined = value;
      else if (i === undefined) return;
      else if (sums) {
        if (cell !== null) sums[p]?.[i]?.addParts(readSumParts(cell));
        s.counts[i] = (s.counts[i] ?? 0) + count;
      } else if (units) {
        // Additive: Count and Sum read 0 where empty, so a bucket adds its units up.
        s.values[i] = (s.values[i] ?? 0) + (value ?? 0);
        s.counts[i] = (s.counts[i] ?? 0) + count;
      } else {
        s.values[i] = value;
        s.counts[i] = count;
      }
    });
  }
  if (sums) {
    series.forEach((s, p) => {
      const total = new ExactSum();
      for (const [i, sum] of (sums[p] ?? []).entries()) {
        s.values[i] = sum.sum();
        total.addSum(sum);
      }
      s.combined = total.sum();
    });
  } else if (additive) {
    for (const s of series) s.combined = s.values.reduce<number>((sum, v) => sum + (v ?? 0), 0);
  }
  return { buckets: plan.buckets, series };
}

/** Sum over events with no numeric metric is 0, like a bucket with no events. */
function normalize(ctx: QueryContext, value: number | null): number | null {
  return value === null ? emptyValue(ctx.query.aggregation) : value;
}

/** Rows of one line over `buckets` (under `key`): a bucket is empty where no event fell in it. */
function rowsOf(
  ctx: QueryContext,
  buckets: Bucket[],
  counts: number[],
  key: string,
  values: (number | null)[],
): LineRow[] {
  const hide = ctx.query.customizations.hideMissing === true;
  return lineRows(
    buckets,
    hide,
    counts.map((c) => c > 0),
    key,
    values,
  );
}

/** Rows and whole-window value of one window. */
type WindowAnswer = LineAnswer;

/** Answers any time-series graph type, as its line kind says (`render/line-kinds.ts`). */
export function timeSeriesEnvelope(ctx: QueryContext): Promise<Envelope> {
  return lineEnvelope(ctx.query, ctx.windows, {
    window: (kind, window, granularity, fixedSeries) => {
      if (kind.split) return splitWindow(ctx, window, granularity, fixedSeries);
      if (kind.value === 'running') return cumulative(ctx, window, granularity);
      if (kind.value === 'ratio') return ratio(ctx, window, granularity);
      return singleLine(ctx, window, granularity);
    },
    compareFilters: (window, granularity) => compareLines(ctx, window, granularity),
  });
}

async function singleLine(
  ctx: QueryContext,
  window: TimeWindow,
  granularity: ResolvedGranularity,
): Promise<WindowAnswer> {
  const result = await aggregateWindow(ctx, window, granularity, (params) => ({
    where: whereFilters(ctx, ctx.query.filters, params),
    populations: ['TRUE'],
  }));
  const [own] = result.series as [Series];
  const key = valueKey(ctx.query.aggregation, ctx.query.metric);
  return {
    rows: rowsOf(ctx, result.buckets, own.counts, key, own.values),
    combined: own.combined,
  };
}

/** Compare Line: `filters` against `filters ∧ compare_filters`, same window, one scan. */
async function compareLines(
  ctx: QueryContext,
  window: TimeWindow,
  granularity: ResolvedGranularity,
): Promise<[WindowAnswer, WindowAnswer]> {
  const { query } = ctx;
  const result = await aggregateWindow(ctx, window, granularity, (params) => ({
    where: whereFilters(ctx, query.filters, params),
    populations: ['TRUE', whereFilters(ctx, query.compare_filters ?? [], params)],
  }));
  const key = valueKey(query.aggregation, query.metric);
  const line = (s: Series): WindowAnswer => ({
    rows: rowsOf(ctx, result.buckets, s.counts, key, s.values),
    combined: s.combined,
  });
  const [own, other] = result.series as [Series, Series];
  return [line(own), line(other)];
}

/** Ratio Line: (filters ∧ numerator) / (filters ∧ denominator) per bucket; null over zero. */
async function ratio(
  ctx: QueryContext,
  window: TimeWindow,
  granularity: ResolvedGranularity,
): Promise<WindowAnswer> {
  const { query } = ctx;
  const result = await aggregateWindow(ctx, window, granularity, (params) => {
    const numerator = whereFilters(ctx, query.numerator_filters ?? [], params);
    const denominator = whereFilters(ctx, query.denominator_filters ?? [], params);
    return {
      where: `${whereFilters(ctx, query.filters, params)} AND (${numerator} OR ${denominator})`,
      populations: [numerator, denominator],
    };
  });
  const [num, den] = result.series as [Series, Series];
  const counts = num.counts.map((c, i) => c + (den.counts[i] ?? 0));
  return {
    rows: rowsOf(
      ctx,
      result.buckets,
      counts,
      'Ratio',
      num.values.map((v, i) => ratioOf(v, den.values[i] ?? null)),
    ),
    combined: ratioOf(num.combined, den.combined),
  };
}

/**
 * Cumulative Line: bucket b holds the aggregation over (start, end of b). Count, Sum and Avg
 * accumulate per-bucket sums; percentiles use a window function over the growing frame.
 */
async function cumulative(
  ctx: QueryContext,
  window: TimeWindow,
  granularity: ResolvedGranularity,
): Promise<WindowAnswer> {
  const { query } = ctx;
  const key = valueKey(query.aggregation, query.metric);
  const empty = emptyValue(query.aggregation);
  const plan = bucketsOf(ctx, window, granularity);
  if (!plan || plan.buckets.length === 0) return { rows: [], combined: empty };
  const params = new SqlParams();
  const k = bucketKeySql(plan, '"timestamp"', params);
  const m = metricSql(ctx, params) ?? 'NULL::DOUBLE';
  const base = `SELECT ${k} AS k, ${m} AS m FROM ${ctx.bound.relation}
    WHERE ${windowWhere(ctx, window, query.filters, params)}`;
  const percentile = !['Count', 'Sum', 'Avg'].includes(query.aggregation);
  const sql = percentile
    ? `SELECT k, count(*), max(q), NULL FROM (
         SELECT k, ${aggregateSql(query.aggregation, 'm', 'TRUE', ' OVER (ORDER BY k RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)')} AS q
         FROM (${base})
       ) GROUP BY k`
    : `SELECT k, count(*), ${sumPartsSql('m')} FROM (${base}) GROUP BY k`;
  const rows = await ctx.run(sql, params);
  const index = new Map(plan.buckets.map((b, i) => [b.key, i]));
  const counts = plan.buckets.map(() => 0);
  const parts: (SumParts | null)[] = plan.buckets.map(() => null);
  const quantiles: (number | null)[] = plan.buckets.map(() => null);
  for (const row of rows) {
    const i = index.get(toNumber(row[0] ?? null) ?? Number.NaN);
    if (i === undefined) continue;
    counts[i] = toNumber(row[1] ?? null) ?? 0;
    if (percentile) quantiles[i] = toNumber(row[2] ?? null);
    else parts[i] = readSumParts(row[2] ?? null);
  }
  // The running sum stays exact and is rounded once per bucket (`plan/exact-sum.ts`).
  const values = runningValues(
    query.aggregation,
    plan.buckets.map((_, i) => {
      const own = parts[i];
      return {
        held: (counts[i] ?? 0) > 0,
        count: counts[i] ?? 0,
        sum: own ? new ExactSum().addParts(own) : null,
        quantile: quantiles[i] ?? null,
      };
    }),
    new ExactSum(),
  );
  return {
    rows: rowsOf(ctx, plan.buckets, counts, key, values),
    combined: values[values.length - 1] ?? empty,
  };
}

/** One split value in one bucket. */
interface Cell {
  value: number | null;
  count: number;
}

/** What a split window's statement yields: cells, per-value totals to rank, the total. */
interface SplitAggregates {
  cells: Map<string, Map<number, Cell>>;
  ranked: Array<{ name: string; value: number | null }>;
  combined: number | null;
}

/**
 * Multi and Stacked Line over one window: wide rows `{timestamp, "<split value>": n, …}` for
 * the top 10 split values by their whole-window value (ties by name), or `fixedSeries`. Events
 * without the split field are left out, including from `combined`.
 */
async function splitWindow(
  ctx: QueryContext,
  window: TimeWindow,
  granularity: ResolvedGranularity,
  fixedSeries: string[] | null,
): Promise<{ rows: LineRow[]; combined: number | null; series: string[] }> {
  const { query } = ctx;
  const empty = emptyValue(query.aggregation);
  const plan = bucketsOf(ctx, window, granularity);
  if (!plan || plan.buckets.length === 0) {
    return { rows: [], combined: empty, series: fixedSeries ?? [] };
  }
  const base = (params: SqlParams) => {
    const split = fields(ctx, params)(query.split ?? '').string ?? 'NULL::VARCHAR';
    const m = metricSql(ctx, params) ?? 'NULL::DOUBLE';
    const k = bucketKeySql(plan, '"timestamp"', params);
    return `SELECT ${split} AS sp, ${k} AS k, ${m} AS m FROM ${ctx.bound.relation}
      WHERE ${windowWhere(ctx, window, query.filters, params)}`;
  };
  const aggregates =
    (query.aggregation === 'Count' || query.aggregation === 'Sum' || query.aggregation === 'Avg'
      ? await splitCells(ctx, base)
      : null) ?? (await rankedSplit(ctx, base, fixedSeries));
  const series = fixedSeries ?? rankSeries(aggregates.ranked).slice(0, LIMITS.series);
  // Each chosen series' cells, found once rather than once per bucket.
  const { cells } = aggregates;
  const chosen = series.map((name) => cells.get(name));
  const counts = plan.buckets.map((bucket) => {
    let count = 0;
    for (const byKey of chosen) count += byKey?.get(bucket.key)?.count ?? 0;
    return count;
  });
  const rows = splitRows(
    plan.buckets,
    query.customizations.hideMissing === true,
    counts.map((c) => c > 0),
    series,
    chosen.map((byKey) => byKey && new Map([...byKey].map(([k, cell]) => [k, cell.value]))),
    empty,
  );
  return { rows, combined: aggregates.combined, series };
}

/**
 * Count, Sum and Avg: one GROUP BY (split value, bucket) as cheap as a hand-written one, with
 * sums and counts from which each value's total and the window's total follow exactly. Null
 * when there are too many groups to rank here.
 */
async function splitCells(
  ctx: QueryContext,
  base: (params: SqlParams) => string,
): Promise<SplitAggregates | null> {
  const params = new SqlParams();
  const rows = await ctx.run(
    `SELECT sp, k, count(*)${ctx.query.aggregation === 'Count' ? '' : `, ${sumPartsSql('m')}`}
     FROM (${base(params)}) WHERE sp IS NOT NULL
     GROUP BY sp, k LIMIT ${params.integer(MAX_SPLIT_CELLS + 1)}`,
    params,
  );
  if (rows.length > MAX_SPLIT_CELLS) return null;
  const { aggregation } = ctx.query;
  // Sums stay exact until each value is rounded once (`plan/exact-sum.ts`).
  type Totals = { count: number; sum: ExactSum };
  const valueFrom = (t: Totals) =>
    aggregation === 'Count' ? t.count : aggregation === 'Sum' ? t.sum.sum() : t.sum.mean();
  const cells = new Map<string, Map<number, Cell>>();
  const totals = new Map<string, Totals>();
  const all: Totals = { count: 0, sum: new ExactSum() };
  const add = (t: Totals, cell: Totals) => {
    t.count += cell.count;
    t.sum.addSum(cell.sum);
  };
  for (const [sp, k, c, parts] of rows) {
    const name = String(sp);
    const cell: Totals = {
      count: toNumber(c ?? null) ?? 0,
      sum: aggregation === 'Count' ? new ExactSum() : sumOfParts(readSumParts(parts ?? null)),
    };
    let byKey = cells.get(name);
    let total = totals.get(name);
    if (!byKey || !total) {
      byKey = new Map();
      cells.set(name, byKey);
      total = { count: 0, sum: new ExactSum() };
      totals.set(name, total);
    }
    byKey.set(toNumber(k ?? null) ?? 0, { value: valueFrom(cell), count: cell.count });
    add(total, cell);
    add(all, cell);
  }
  return {
    cells,
    ranked: [...totals].map(([name, t]) => ({ name, value: valueFrom(t) })),
    combined: valueFrom(all),
  };
}

/**
 * Percentiles, or too many groups: DuckDB ranks the split values by their whole-window value and
 * aggregates only the top 10 per bucket, with the window's total, in one statement.
 */
async function rankedSplit(
  ctx: QueryContext,
  base: (params: SqlParams) => string,
  fixedSeries: string[] | null,
): Promise<SplitAggregates> {
  const params = new SqlParams();
  const { aggregation } = ctx.query;
  const agg = aggregateSql(aggregation, 'm');
  const from = base(params);
  const chosen = fixedSeries ? `list_contains(${params.texts(fixedSeries)}, sp)` : 'TRUE';
  const rows = await ctx.run(
    `WITH base AS (SELECT * FROM (${from}) WHERE sp IS NOT NULL),
          top AS (SELECT sp, ${agg} AS v, ${aggregateOrderSql(aggregation, 'm')} AS o FROM base WHERE ${chosen} GROUP BY sp
                  ORDER BY o DESC NULLS LAST, sp LIMIT ${LIMITS.series})
     SELECT 0 AS part, sp, k, ${agg} AS v, count(*) AS c FROM base WHERE sp IN (SELECT sp FROM top) GROUP BY sp, k
     UNION ALL SELECT 1, sp, NULL, v, NULL FROM top
     UNION ALL SELECT 2, NULL, NULL, ${agg}, count(*) FROM base`,
    params,
  );
  const result: SplitAggregates = { cells: new Map(), ranked: [], combined: null };
  result.combined = emptyValue(ctx.query.aggregation);
  for (const [part, sp, k, v, c] of rows) {
    if (part === 1)
      result.ranked.push({ name: String(sp), value: readAggregate(aggregation, v ?? null) });
    else if (part === 2) result.combined = normalize(ctx, readAggregate(aggregation, v ?? null));
    else {
      let byKey = result.cells.get(String(sp));
      if (!byKey) {
        byKey = new Map();
        result.cells.set(String(sp), byKey);
      }
      byKey.set(toNumber(k ?? null) ?? 0, {
        value: normalize(ctx, readAggregate(aggregation, v ?? null)),
        count: toNumber(c ?? null) ?? 0,
      });
    }
  }
  return result;
}
