import {
  andFilters,
  type CollectionQuery,
  type Envelope,
  LIMITS,
  pickGranularity,
  type ResolvedGranularity,
  type ResolvedWindows,
  type TimeWindow,
  valueKey,
} from '@analytics-chart/protocol';
import { EngineError } from '../../engine-error.ts';
import { ClickHouseParams } from '../../storage/clickhouse/clickhouse-params.ts';
import type { ClickHouseRun } from '../../storage/clickhouse/clickhouse-run.ts';
import { emptyValue } from '../plan/collection-plan.ts';
import { type BucketPlan, planBuckets, windowSeconds } from '../plan/time-buckets.ts';
import { aggregateSql } from './clickhouse-aggregate-sql.ts';
import { rankSplit } from './clickhouse-categories.ts';
import { inWindow, rowsOf, source } from './clickhouse-events.ts';
import { filtersSql, numericFieldSql, stringFieldSql } from './clickhouse-fields.ts';
import { aggregateWindow } from './clickhouse-single-value.ts';

/** The seconds ClickHouse's DateTime64 can represent (1900-01-01 to 2299-12-31), in which it buckets. */
const FIRST_SECOND = -2_208_988_800;
const LAST_SECOND = 10_413_791_999;

/**
 * The time-series graph types: Single, Cumulative, Compare, Ratio, Multi and Stacked Line, each
 * bucket keyed in ClickHouse and matched against the engine's bucket plan.
 */
export async function clickHouseTimeSeries(
  query: CollectionQuery,
  windows: ResolvedWindows,
  run: ClickHouseRun,
): Promise<Envelope> {
  const { window, compare } = windows;
  const granularity = pickGranularity(query.granularity, window);
  const split = query.graph_type === 'Multi Line' || query.graph_type === 'Stacked Line';
  const line = (w: TimeWindow) =>
    query.graph_type === 'Ratio Line'
      ? ratioLine(query, w, granularity, run)
      : singleLine(query, w, granularity, run);
  const main = split ? await splitLines(query, window, granularity, run, null) : await line(window);
  const envelope: Envelope = {
    result: main.rows,
    metadata: { granularity, combined: main.combined },
  };
  if (main.series) envelope.metadata.series = main.series;
  if (query.graph_type === 'Compare Line') {
    // The second line: the same query with compare_filters added to the filters.
    const filters = andFilters(query.filters, query.compare_filters ?? []);
    const other = await singleLine({ ...query, filters }, window, granularity, run);
    envelope.compare_result = other.rows;
    envelope.metadata.compare_combined = other.combined;
  } else if (compare) {
    // The compare window keeps the main window's series, in the same order.
    const other = split
      ? await splitLines(query, compare, granularity, run, main.series ?? [])
      : await line(compare);
    envelope.compare_result = other.rows;
    envelope.metadata.compare_combined = other.combined;
  }
  return envelope;
}

/** The bucket key of `timestamp` in the zone, as `planBuckets` numbers buckets. */
function keySql(plan: BucketPlan, params: ClickHouseParams, zone: string): string {
  const local = () => `toDateTime64(timestamp, 0, ${params.add('String', zone)})`;
  switch (plan.granularity) {
    case 'Minute':
    case 'Hour': {
      // The plan's own keys: each pass of the zone's clock through a minute or hour is one
      // bucket, whatever the size of an offset change; the window's offsets come with the plan.
      const clock = plan.clock;
      if (!clock) throw new Error('a Minute or Hour plan without its clock');
      const segments = clock.segments;
      const offset =
        segments.length === 1
          ? params.add('Int64', segments[0]?.offset ?? 0)
          : `multiIf(${segments
              .slice(1)
              .map(
                (s, i) =>
                  `timestamp < ${params.add('Int64', s.from)}, ${params.add('Int64', segments[i]?.offset ?? 0)}`,
              )
              .join(', ')}, ${params.add('Int64', segments[segments.length - 1]?.offset ?? 0)})`;
      return `intDiv(toInt64(timestamp) + ${offset}, ${params.add('Int64', clock.width)})`;
    }
    case 'Day':
      return `toInt64(toDate32(${local()}))`;
    case 'Week':
      // Monday weeks numbered as the plan does: day d is in week floor((d + 3) / 7).
      return `toInt64(floor((toInt64(toDate32(${local()})) + 3) / 7))`;
    case 'Month': {
      const t = local();
      return `toInt64(toYear(${t})) * 12 + toMonth(${t}) - 1`;
    }
  }
}

type TimeRow = Record<string, string | number | null>;

/**
 * The engine's bucket plan for the window, refused (501) outside the range ClickHouse buckets
 * (DateTime64: 1900 to 2299), with the set of its keys.
 */
function bucketPlan(granularity: ResolvedGranularity, zone: string, lo: number, hi: number) {
  if (lo < FIRST_SECOND || hi > LAST_SECOND) {
    throw new EngineError(
      501,
      'time series on ClickHouse cover 1900 to 2299 (the range of its DateTime64); choose a window within it',
    );
  }
  const plan = planBuckets(granularity, zone, lo, hi);
  return { ...plan, known: new Set(plan.buckets.map((b) => b.key)) };
}

/**
 * Single Line (and Compare Line's two lines): the aggregate per bucket. Cumulative Line: the
 * aggregate over every event up to the end of each bucket, from per-bucket sums and counts
 * (percentiles are not cumulated yet: a 501 before this runs).
 */
async function singleLine(
  query: CollectionQuery,
  window: TimeWindow,
  granularity: ResolvedGranularity,
  run: ClickHouseRun,
): Promise<{ rows: TimeRow[]; combined: number | null; series?: string[] }> {
  const key = valueKey(query.aggregation, query.metric);
  const empty = emptyValue(query.aggregation);
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return { rows: [], combined: empty };
  const plan = bucketPlan(granularity, query.IANA_time_zone, lo, hi);
  const params = new ClickHouseParams();
  const m = query.metric === null ? 'NULL' : numericFieldSql(query.metric, params);
  const where = inWindow(query, lo, hi, params);
  const k = keySql(plan, params, query.IANA_time_zone);
  const bucketRows = rowsOf<{
    k: number;
    n: number;
    v: number | null;
    s: number | null;
    c: number;
  }>(
    run,
    `SELECT ${k} AS k, count() AS n, ${aggregateSql(query.aggregation, m, params)} AS v,
       sumOrNull(${m}) AS s, count(${m}) AS c
     FROM ${source(run)} WHERE ${where} GROUP BY k`,
    params,
  );
  const additive = query.aggregation === 'Count' || query.aggregation === 'Sum';
  const [found, total] = await Promise.all([
    bucketRows,
    additive ? undefined : aggregateWindow(query, window, run),
  ]);
  const byKey = new Map(found.map((r) => [r.k, r]));
  for (const r of found) {
    if (!plan.known.has(r.k))
      throw new Error(`ClickHouse bucket key ${r.k} is not in the bucket plan`);
  }
  const cumulative = query.graph_type === 'Cumulative Line';
  const hide = query.customizations.hideMissing === true;
  const rows: TimeRow[] = [];
  let sum = 0;
  let runningSum = 0;
  let runningCount = 0;
  for (const bucket of plan.buckets) {
    const row = byKey.get(bucket.key);
    const value = row ? (row.v ?? empty) : empty;
    sum += value ?? 0;
    runningSum += row?.s ?? 0;
    runningCount += row?.c ?? 0;
    if (hide && !row) continue;
    let shown = value;
    if (cumulative) {
      if (additive) shown = sum;
      else shown = runningCount === 0 ? null : runningSum / runningCount;
    }
    rows.push({ timestamp: bucket.label, [key]: shown });
  }
  return { rows, combined: additive ? sum : (total?.value ?? null) };
}

/**
 * Multi Line and Stacked Line: wide rows `{timestamp, <series>…}` for the 10 series with the
 * largest value over the window (or the given ones, for the compare window), every bucket of
 * the plan; `combined` is the aggregate over all events that have the split field.
 */
async function splitLines(
  query: CollectionQuery,
  window: TimeWindow,
  granularity: ResolvedGranularity,
  run: ClickHouseRun,
  fixedSeries: string[] | null,
): Promise<{ rows: TimeRow[]; combined: number | null; series: string[] }> {
  const empty = emptyValue(query.aggregation);
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return { rows: [], combined: empty, series: fixedSeries ?? [] };
  const plan = bucketPlan(granularity, query.IANA_time_zone, lo, hi);
  const series =
    fixedSeries ?? (await rankSplit(query, lo, hi, run, LIMITS.series)).map((r) => r.sp);
  const params = new ClickHouseParams();
  const split = stringFieldSql(query.split ?? '', params);
  const m = query.metric === null ? 'NULL' : numericFieldSql(query.metric, params);
  const [found, total] = await Promise.all([
    rowsOf<{ k: number; sp: string; v: number | null }>(
      run,
      `SELECT ${keySql(plan, params, query.IANA_time_zone)} AS k, ${split} AS sp,
         ${aggregateSql(query.aggregation, m, params)} AS v
       FROM ${source(run)}
       WHERE ${inWindow(query, lo, hi, params)} AND sp IN ${params.add('Array(String)', series)}
       GROUP BY k, sp`,
      params,
    ),
    aggregateWindow(query, window, run, true),
  ]);
  const byKey = new Map<number, Map<string, number | null>>();
  for (const r of found) {
    if (!plan.known.has(r.k))
      throw new Error(`ClickHouse bucket key ${r.k} is not in the bucket plan`);
    const cell = byKey.get(r.k) ?? new Map<string, number | null>();
    cell.set(r.sp, r.v);
    byKey.set(r.k, cell);
  }
  const hide = query.customizations.hideMissing === true;
  const rows: TimeRow[] = [];
  for (const bucket of plan.buckets) {
    const cell = byKey.get(bucket.key);
    if (hide && !cell) continue;
    const row: TimeRow = { timestamp: bucket.label };
    for (const name of series) row[name] = cell?.has(name) ? (cell.get(name) ?? empty) : empty;
    rows.push(row);
  }
  return { rows, combined: total.value, series };
}

/**
 * Ratio Line: per bucket, the aggregate over the events matching `numerator_filters` divided by
 * the one over `denominator_filters` (both within `filters`); null where either is null or the
 * denominator is 0. A bucket is empty when neither side has an event.
 */
async function ratioLine(
  query: CollectionQuery,
  window: TimeWindow,
  granularity: ResolvedGranularity,
  run: ClickHouseRun,
): Promise<{ rows: TimeRow[]; combined: number | null; series?: string[] }> {
  const empty = emptyValue(query.aggregation);
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return { rows: [], combined: null };
  const plan = bucketPlan(granularity, query.IANA_time_zone, lo, hi);
  const params = new ClickHouseParams();
  const m = query.metric === null ? 'NULL' : numericFieldSql(query.metric, params);
  const num = filtersSql(query.numerator_filters ?? [], params);
  const den = filtersSql(query.denominator_filters ?? [], params);
  const columns = `countIf(${num}) AS nn, countIf(${den}) AS dn,
    ${aggregateSql(query.aggregation, m, params, num)} AS a,
    ${aggregateSql(query.aggregation, m, params, den)} AS b`;
  const where = inWindow(query, lo, hi, params);
  type Sides = { nn: number; dn: number; a: number | null; b: number | null };
  const [found, totals] = await Promise.all([
    rowsOf<Sides & { k: number }>(
      run,
      `SELECT ${keySql(plan, params, query.IANA_time_zone)} AS k, ${columns}
       FROM ${source(run)} WHERE ${where} GROUP BY k`,
      params,
    ),
    rowsOf<Sides>(run, `SELECT ${columns} FROM ${source(run)} WHERE ${where}`, params),
  ]);
  const ratio = (r: Sides | undefined) => {
    const a = r?.a ?? empty;
    const b = r?.b ?? empty;
    return a === null || b === null || b === 0 ? null : a / b;
  };
  const byKey = new Map(found.map((r) => [r.k, r]));
  for (const r of found) {
    if (!plan.known.has(r.k))
      throw new Error(`ClickHouse bucket key ${r.k} is not in the bucket plan`);
  }
  const hide = query.customizations.hideMissing === true;
  const rows: TimeRow[] = [];
  for (const bucket of plan.buckets) {
    const r = byKey.get(bucket.key);
    if (hide && (r?.nn ?? 0) + (r?.dn ?? 0) === 0) continue;
    rows.push({ timestamp: bucket.label, Ratio: ratio(r) });
  }
  return { rows, combined: ratio(totals[0]) };
}
