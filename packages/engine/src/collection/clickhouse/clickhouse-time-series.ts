import {
  andFilters,
  type Envelope,
  LIMITS,
  type ResolvedGranularity,
  type TimeWindow,
  valueKey,
} from '@analytics-chart/protocol';
import { EngineError } from '../../engine-error.ts';
import { ClickHouseParams } from '../../storage/clickhouse/clickhouse-params.ts';
import type { ClickHouseRun } from '../../storage/clickhouse/clickhouse-run.ts';
import { boundField } from '../bind/bound-query.ts';
import type { ClickHouseBoundQuery } from '../bind/clickhouse/bind-clickhouse-query.ts';
import { lineEnvelope } from '../line-windows.ts';
import { type CalendarUnits, calendarUnits, UNIT_SHIFT } from '../plan/calendar-units.ts';
import { emptyValue, isAdditive, QUANTILE } from '../plan/collection-plan.ts';
import { ExactSum } from '../plan/exact-sum.ts';
import { MAX_SPLIT_CELLS, rankCandidatesSql } from '../plan/split-series.ts';
import { offsetSegments, planBuckets, windowSeconds } from '../plan/time-buckets.ts';
import { type LineKind, lineKind } from '../render/line-kinds.ts';
import { growingPercentiles } from '../shape/growing-percentiles.ts';
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
} from './clickhouse-aggregate-sql.ts';
import { inWindow, rowsOf, source } from './clickhouse-events.ts';
import { filtersSql, numericFieldSql, stringFieldSql } from './clickhouse-fields.ts';

/** The seconds ClickHouse's DateTime64 can represent (1900-01-01 to 2299-12-31), in which it buckets. */
const FIRST_SECOND = -2_208_988_800;
const LAST_SECOND = 10_413_791_999;
/** Days added before an integer division so that every second it buckets is positive. */
const SHIFT_DAYS = 7 * 10_000;

/**
 * The time-series graph types: Single, Cumulative, Compare, Ratio, Multi and Stacked Line, each
 * bucket keyed in ClickHouse and matched against the engine's bucket plan.
 */
export function clickHouseTimeSeries(
  bound: ClickHouseBoundQuery,
  run: ClickHouseRun,
): Promise<Envelope> {
  const { query } = bound;
  return lineEnvelope(query, bound.windows, {
    window: (kind, window, granularity, fixedSeries) => {
      if (kind.split) return splitLines(bound, window, granularity, run, fixedSeries);
      if (kind.value === 'ratio') return ratioLine(bound, window, granularity, run);
      if (kind.value === 'running' && QUANTILE[query.aggregation] !== undefined)
        return growingPercentileLine(bound, window, granularity, run);
      return singleLine(bound, kind, window, granularity, run);
    },
    // The second line: the same query with compare_filters added to the filters.
    compareFilters: async (window, granularity) => {
      const filters = andFilters(query.filters, query.compare_filters ?? []);
      const other = { ...bound, query: { ...query, filters } };
      const kind = lineKind(query.graph_type);
      const main = await singleLine(bound, kind, window, granularity, run);
      return [main, await singleLine(other, kind, window, granularity, run)];
    },
  });
}

/** The window's UTC offsets as SQL: the one that holds at each row's `timestamp`. */
function offsetSql(
  segments: readonly { from: number; offset: number }[],
  params: ClickHouseParams,
): string {
  if (segments.length === 1) return params.add('Int64', segments[0]?.offset ?? 0);
  return `multiIf(${segments
    .slice(1)
    .map(
      (s, i) =>
        `timestamp < ${params.add('Int64', s.from)}, ${params.add('Int64', segments[i]?.offset ?? 0)}`,
    )
    .join(', ')}, ${params.add('Int64', segments[segments.length - 1]?.offset ?? 0)})`;
}

/**
 * The bucket key of `timestamp`, as `planBuckets` numbers buckets, from the engine's own
 * offsets of the zone in the window (Temporal's tz data, as on DuckDB) rather than ClickHouse's
 * time-zone tables, which put a second on the wrong date where a clock was set back across
 * midnight (America/Goose_Bay's 00:01 changes of 1987 to 1991).
 */
function keySql(plan: ClickHousePlan, params: ClickHouseParams): string {
  switch (plan.granularity) {
    case 'Minute':
    case 'Hour': {
      // Each pass of the zone's clock through a minute or hour is one bucket, whatever the size
      // of an offset change; the plan's clock gives each offset's shift.
      const clock = plan.clock;
      if (!clock) throw new Error('a Minute or Hour plan without its clock');
      return `intDiv(toInt64(timestamp) + ${offsetSql(clock.segments, params)}, ${params.add('Int64', clock.width)})`;
    }
    case 'Day':
    case 'Week':
    case 'Month': {
      // The zone's date as days since 1970-01-01, floored in integers: shifted past 1900's
      // wall clocks (negative seconds), divided, shifted back.
      const day = `(intDiv(timestamp + ${offsetSql(plan.offsets, params)} + ${SHIFT_DAYS * 86_400}, 86400) - ${SHIFT_DAYS})`;
      if (plan.granularity === 'Day') return day;
      // Monday weeks numbered as the plan does: day d is in week floor((d + 3) / 7).
      if (plan.granularity === 'Week')
        return `(intDiv(${day} + ${3 + SHIFT_DAYS}, 7) - ${SHIFT_DAYS / 7})`;
      const date = `toDate32(${day})`;
      return `toInt64(toYear(${date})) * 12 + toMonth(${date}) - 1`;
    }
  }
}

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
  return {
    ...plan,
    known: new Set(plan.buckets.map((b) => b.key)),
    offsets: offsetSegments(zone, lo, hi),
  };
}

type ClickHousePlan = ReturnType<typeof bucketPlan>;

/** A key ClickHouse computed that the plan does not know is an error, never a dropped event. */
function checkBucketKey(key: number, plan: ClickHousePlan): void {
  if (!plan.known.has(key))
    throw new Error(`ClickHouse bucket key ${key} is not in the bucket plan`);
}

/** The rows of one statement by bucket key, each key checked against the plan. */
function byBucketKey<T extends { k: number }>(found: T[], plan: ClickHousePlan): Map<number, T> {
  for (const r of found) checkBucketKey(r.k, plan);
  return new Map(found.map((r) => [r.k, r]));
}

/**
 * A Count's or Sum's buckets from its units: each unit's value added to its bucket's (NULL,
 * a Sum without a number, only where every unit of the bucket is).
 */
function bucketsOfUnits(
  rows: Array<{ u: number; v: unknown }>,
  units: CalendarUnits,
  aggregation: ClickHouseBoundQuery['query']['aggregation'],
): Array<{ k: number; v: unknown; sum?: ExactSum }> {
  const buckets = new Map<number, { count: number; sum: ExactSum }>();
  for (const { u, v } of rows) {
    const k = units.bucketOf(u - UNIT_SHIFT / units.seconds);
    const bucket = buckets.get(k) ?? { count: 0, sum: new ExactSum() };
    // A Sum's units add their exact parts (`plan/exact-sum.ts`); a Count's are integers.
    if (aggregation === 'Sum') bucket.sum.addParts(readSumParts(v));
    else bucket.count += Number(v ?? 0);
    buckets.set(k, bucket);
  }
  return [...buckets].map(([k, b]) => ({
    k,
    v: aggregation === 'Sum' ? null : b.count,
    sum: aggregation === 'Sum' ? b.sum : undefined,
  }));
}

/**
 * Single Line (and Compare Line's two lines): the aggregate per bucket. Cumulative Line of Count,
 * Sum and Avg: the aggregate over every event up to the end of each bucket, from per-bucket sums
 * and counts.
 */
async function singleLine(
  bound: ClickHouseBoundQuery,
  kind: LineKind,
  window: TimeWindow,
  granularity: ResolvedGranularity,
  run: ClickHouseRun,
): Promise<{ rows: LineRow[]; combined: number | null; series?: string[] }> {
  const { query } = bound;
  const key = valueKey(query.aggregation, query.metric);
  const empty = emptyValue(query.aggregation);
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return { rows: [], combined: empty };
  const plan = bucketPlan(granularity, query.IANA_time_zone, lo, hi);
  const params = new ClickHouseParams();
  const m = bound.metric === null ? 'NULL' : numericFieldSql(bound.metric, params);
  const where = inWindow(bound, lo, hi, params);
  const additive = isAdditive(query.aggregation);
  const cumulative = kind.value === 'running';
  // A non-additive line's combined value is the aggregate over the window, the empty grouping
  // set of the same statement; a running average adds its buckets' exact parts.
  const units = additive ? calendarUnits(plan, lo, hi) : undefined;
  const bucketsFound: Promise<Array<{ k: number; v: unknown; sum?: ExactSum; g?: number }>> =
    units === undefined
      ? rowsOf(
          run,
          `SELECT ${keySql(plan, params)} AS k, ${aggregateSql(query.aggregation, m, params)} AS v
             ${additive ? '' : ', grouping(k) AS g'}
           FROM ${source(run)} WHERE ${where}
           GROUP BY ${additive ? 'k' : 'GROUPING SETS ((k), ())'}`,
          params,
        )
      : rowsOf<{ u: number; v: unknown }>(
          run,
          `SELECT intDiv(timestamp + ${params.add('Int64', UNIT_SHIFT)}, ${params.add('Int64', units.seconds)}) AS u,
             ${aggregateSql(query.aggregation, m, params)} AS v
           FROM ${source(run)} WHERE ${where} GROUP BY u`,
          params,
        ).then((rows) => bucketsOfUnits(rows, units, query.aggregation));
  const rowsFound = await bucketsFound;
  const total = rowsFound.find((r) => r.g === 1);
  const byKey = byBucketKey(
    rowsFound.filter((r) => r.g !== 1),
    plan,
  );
  const hide = query.customizations.hideMissing === true;
  const { aggregation } = query;
  const exact = aggregation === 'Sum' || aggregation === 'Avg';
  const found = plan.buckets.map((bucket) => byKey.get(bucket.key));
  // Each bucket's exact sum (Sum, Avg), rounded once per value shown.
  const sums = found.map(
    (row) => row?.sum ?? (row && exact ? new ExactSum().addParts(readSumParts(row.v)) : null),
  );
  const values = found.map((row, i) => {
    const own = sums[i];
    if (own) return aggregation === 'Avg' ? own.mean() : own.sum();
    return row ? (readAggregate(aggregation, row.v) ?? empty) : empty;
  });
  const running = new ExactSum();
  const shown = runningValues(
    aggregation,
    plan.buckets.map((_, i) => ({
      held: found[i] !== undefined,
      count: aggregation === 'Count' ? (values[i] ?? 0) : 0,
      sum: sums[i] ?? null,
      quantile: null,
    })),
    running,
  );
  const rows = lineRows(
    plan.buckets,
    hide,
    found.map((row) => row !== undefined),
    key,
    cumulative ? shown : values,
  );
  const combined =
    aggregation === 'Count'
      ? (shown[shown.length - 1] ?? 0)
      : aggregation === 'Sum'
        ? running.sum()
        : null;
  return {
    rows,
    combined: additive ? combined : total ? readAggregate(aggregation, total.v) : null,
  };
}

/**
 * A Cumulative Line of a percentile: each bucket's values come back, and the shape stage takes
 * the ranks of the growing frame, from the window's start to each bucket's end, and interpolates
 * by the number rule (`shape/growing-percentiles.ts`); `combined` is the last bucket's.
 */
async function growingPercentileLine(
  bound: ClickHouseBoundQuery,
  window: TimeWindow,
  granularity: ResolvedGranularity,
  run: ClickHouseRun,
): Promise<{ rows: LineRow[]; combined: number | null }> {
  const { query } = bound;
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return { rows: [], combined: null };
  const plan = bucketPlan(granularity, query.IANA_time_zone, lo, hi);
  const params = new ClickHouseParams();
  const m = numericFieldSql(boundField(bound, query.metric ?? ''), params);
  const found = await rowsOf<{ k: number; v: number[] }>(
    run,
    `SELECT ${keySql(plan, params)} AS k, groupArray(${m}) AS v
     FROM ${source(run)} WHERE ${inWindow(bound, lo, hi, params)} GROUP BY k`,
    params,
  );
  const byKey = byBucketKey(found, plan);
  const buckets = plan.buckets.map((bucket) => byKey.get(bucket.key));
  const growing = growingPercentiles(
    QUANTILE[query.aggregation] as number,
    buckets.map((row) => row?.v ?? []),
  );
  const shown = runningValues(
    query.aggregation,
    buckets.map((row, i) => ({
      held: row !== undefined,
      count: 0,
      sum: null,
      quantile: growing[i] ?? null,
    })),
    new ExactSum(),
  );
  const rows = lineRows(
    plan.buckets,
    query.customizations.hideMissing === true,
    buckets.map((row) => row !== undefined),
    valueKey(query.aggregation, query.metric),
    shown,
  );
  return { rows, combined: shown[shown.length - 1] ?? null };
}

/** A split's cells by bucket key and series, its series in rank order, and its `combined`. */
interface SplitCells {
  cells: Map<number, Map<string, number | null>>;
  names: string[];
  combined: number | null;
}

/**
 * Multi Line and Stacked Line: wide rows `{timestamp, <series>…}` for the 10 series with the
 * largest value over the window (or the given ones, for the compare window), every bucket of
 * the plan; `combined` is the aggregate over all events that have the split field.
 */
async function splitLines(
  bound: ClickHouseBoundQuery,
  window: TimeWindow,
  granularity: ResolvedGranularity,
  run: ClickHouseRun,
  fixedSeries: string[] | null,
): Promise<{ rows: LineRow[]; combined: number | null; series: string[] }> {
  const { query } = bound;
  const empty = emptyValue(query.aggregation);
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return { rows: [], combined: empty, series: fixedSeries ?? [] };
  const plan = bucketPlan(granularity, query.IANA_time_zone, lo, hi);
  const additive = isAdditive(query.aggregation);
  const params = new ClickHouseParams();
  const scan: SplitScan = {
    query,
    plan,
    run,
    params,
    fixedSeries,
    split: stringFieldSql(boundField(bound, query.split ?? ''), params),
    m: bound.metric === null ? 'NULL' : numericFieldSql(bound.metric, params),
    where: inWindow(bound, lo, hi, params),
  };
  const { cells, names, combined } = additive
    ? await additiveSplit(scan)
    : await groupedSplit(scan);
  // By series, each one's values by bucket key.
  const bySeries = names.map(() => new Map<number, number | null>());
  const index = new Map(names.map((name, s) => [name, s]));
  for (const [k, cell] of cells) {
    for (const [name, v] of cell) {
      const s = index.get(name);
      if (s !== undefined) bySeries[s]?.set(k, v);
    }
  }
  const rows = splitRows(
    plan.buckets,
    query.customizations.hideMissing === true,
    plan.buckets.map((bucket) => cells.has(bucket.key)),
    names,
    bySeries,
    empty,
  );
  return { rows, combined: combined ?? empty, series: names };
}

/** One split statement's parts: the split field, the metric and the window's condition as SQL. */
interface SplitScan {
  query: ClickHouseBoundQuery['query'];
  plan: ClickHousePlan;
  run: ClickHouseRun;
  params: ClickHouseParams;
  /** The compare window's series, or null to rank them. */
  fixedSeries: string[] | null;
  split: string;
  m: string;
  where: string;
}

/** Files a cell under its bucket key, checked against the plan. */
function addCell(
  cells: SplitCells['cells'],
  plan: ClickHousePlan,
  k: number,
  sp: string,
  v: number | null,
): void {
  checkBucketKey(k, plan);
  const cell = cells.get(k) ?? new Map<string, number | null>();
  cell.set(sp, v);
  cells.set(k, cell);
}

/**
 * Count and Sum: a series' value and `combined` are sums of its cells. Up to
 * {@link MAX_SPLIT_CELLS} cells come back from one GROUP BY and the engine ranks the series, as
 * the DuckDB driver does; beyond, ClickHouse ranks them ({@link rankedAdditiveSplit}).
 */
async function additiveSplit(scan: SplitScan): Promise<SplitCells> {
  const { query, plan, run, params, fixedSeries, split, m, where } = scan;
  const key = keySql(plan, params);
  const value = aggregateSql(query.aggregation, m, params);
  const order = aggregateOrderSql(query.aggregation, m, params);
  // The cells' GROUP BY, which the fallback rolls up: both statements share it and its parameters.
  const cellsSql = `SELECT ${key} AS k, ${split} AS sp, ${value} AS v,
       ${order.key} AS ko, ${order.slack} AS ke
     FROM ${source(run)} WHERE ${where} AND sp IS NOT NULL
     GROUP BY k, sp`;
  const rows = await rowsOf<{ k: number; sp: string; v: unknown }>(
    run,
    `${cellsSql}
     LIMIT ${MAX_SPLIT_CELLS + 1}`,
    params,
  );
  if (rows.length > MAX_SPLIT_CELLS) return rankedAdditiveSplit(scan, cellsSql);
  // A Sum's totals add the cells' exact parts and round once (`plan/exact-sum.ts`).
  const exact = query.aggregation === 'Sum';
  const totals = new Map<string, ExactSum>();
  const all = new ExactSum();
  const values = rows.map(({ k, sp, v }) => {
    checkBucketKey(k, plan);
    const cell = new ExactSum();
    if (exact) cell.addParts(readSumParts(v));
    else cell.count = Number(v ?? 0);
    const total = totals.get(sp) ?? new ExactSum();
    totals.set(sp, total.addSum(cell));
    all.addSum(cell);
    return exact ? cell.sum() : cell.count;
  });
  const totalOf = (sum: ExactSum) => (exact ? sum.sum() : sum.count);
  const names =
    fixedSeries ??
    rankSeries([...totals].map(([name, total]) => ({ name, value: totalOf(total) }))).slice(
      0,
      LIMITS.series,
    );
  const kept = new Set(names);
  const cells: SplitCells['cells'] = new Map();
  rows.forEach(({ k, sp }, i) => {
    if (kept.has(sp)) addCell(cells, plan, k, sp, values[i] ?? null);
  });
  return { cells, names, combined: rows.length === 0 ? null : totalOf(all) };
}

/**
 * Count and Sum over more cells than the engine ranks: ClickHouse groups the scan by bucket and
 * series and rolls the cells up per series; only the cells of the series that may rank among the
 * top 10 (`rankCandidatesSql`), or of the given ones, come back, and the engine ranks those by
 * their exact values.
 */
async function rankedAdditiveSplit(scan: SplitScan, cellsSql: string): Promise<SplitCells> {
  const { plan, run, params, fixedSeries } = scan;
  // A series' key adds its cells' keys up: its slack adds theirs and what that addition may
  // round away, (cells + 4)·10^-15 of the sum of their |key|. (Names differ from the cells':
  // ClickHouse's aliases are global.)
  const series = `SELECT sp, groupArray((k, v)) AS cells, sum(ko) AS o,
       sum(ke) + (toFloat64(count()) + 4.) * 1e-15 * sum(abs(ko)) AS e
     FROM (${cellsSql})
     GROUP BY sp`;
  const { aggregation } = scan.query;
  const rows = await rowsOf<{ sp: string; cells: Array<[number, unknown]> }>(
    run,
    fixedSeries === null
      ? rankCandidatesSql('sp, cells', series, params.add('UInt32', LIMITS.series))
      : `SELECT sp, cells FROM (${series}) WHERE has(${params.add('Array(String)', fixedSeries)}, sp)`,
    params,
  );
  // The whole window's exact total, beside the ranked series (`plan/exact-sum.ts`).
  const [total] = await rowsOf<{ t: unknown }>(
    run,
    `SELECT ${aggregation === 'Sum' ? sumPartsSql(scan.m) : 'count()'} AS t
     FROM ${source(run)} WHERE ${scan.where} AND ${scan.split} IS NOT NULL`,
    params,
  );
  const exactCell = (v: unknown) =>
    aggregation === 'Sum' ? new ExactSum().addParts(readSumParts(v)) : null;
  const named = rows.map((row) => {
    const sum = new ExactSum();
    for (const [, v] of row.cells) {
      const cell = exactCell(v);
      if (cell) sum.addSum(cell);
      else sum.count += Number(v ?? 0);
    }
    return { name: row.sp, value: aggregation === 'Sum' ? sum.sum() : sum.count };
  });
  const names = fixedSeries ?? rankSeries(named).slice(0, LIMITS.series);
  const kept = new Set(names);
  const cells: SplitCells['cells'] = new Map();
  for (const row of rows) {
    if (!kept.has(row.sp)) continue;
    for (const [k, v] of row.cells) {
      addCell(cells, plan, k, row.sp, exactCell(v)?.sum() ?? Number(v ?? 0));
    }
  }
  return { cells, names, combined: readAggregate(aggregation, total?.t ?? null) };
}

/**
 * Average and percentiles: a series' value is not a function of its cells, so one scan is
 * grouped three ways: per bucket and series (the cells), per series (their rank, as categories
 * rank them) and over every event with the split field (`combined`). Only the cells of the top
 * series (or of the given ones) come back.
 */
async function groupedSplit(scan: SplitScan): Promise<SplitCells> {
  const { query, plan, run, params, fixedSeries, split, m, where } = scan;
  const value = aggregateSql(query.aggregation, 'm', params);
  const order = aggregateOrderSql(query.aggregation, 'm', params);
  const cap = params.add('UInt32', LIMITS.series);
  // A series is kept where it may rank among the top 10 (`rankCandidatesSql`, here beside the
  // other grouping sets): among the first 10 by its lower bound, or its upper bound reaching
  // the 10th lower bound `t`.
  const kept =
    fixedSeries === null ? 'sc = 1' : `sp IN ${params.add('Array(String)', fixedSeries)}`;
  const all = await rowsOf<{
    k: number;
    sp: string;
    v: unknown;
    gk: number;
    gs: number;
  }>(
    run,
    `SELECT k, sp, v, gk, gs FROM (
       SELECT *, max(c) OVER (PARTITION BY sp) AS sc FROM (
         SELECT *, if(gk = 1 AND gs = 0 AND (r BETWEEN 1 AND ${cap} OR o + e >= t), 1, 0) AS c FROM (
           SELECT *, max(if(r = ${cap}, o - e, NULL)) OVER () AS t FROM (
             SELECT k, sp, v, o, e, gk, gs,
               if(gk = 1 AND gs = 0, row_number() OVER (PARTITION BY gk, gs ORDER BY o - e DESC NULLS LAST, sp), 0) AS r
             FROM (
               SELECT k, sp, ${value} AS v, ${order.key} AS o, ${order.slack} AS e,
                 grouping(k) AS gk, grouping(sp) AS gs
               FROM (
                 SELECT ${keySql(plan, params)} AS k, ${split} AS sp, ${m} AS m
                 FROM ${source(run)} WHERE ${where} AND sp IS NOT NULL)
               GROUP BY GROUPING SETS ((k, sp), (sp), ()))))))
     WHERE gs = 1 OR ${kept}`,
    params,
  );
  const read = (v: unknown) => readAggregate(query.aggregation, v);
  // The exact values order the series SQL kept.
  const names =
    fixedSeries ??
    rankSeries(
      all.filter((r) => r.gk === 1 && r.gs === 0).map((r) => ({ name: r.sp, value: read(r.v) })),
    ).slice(0, LIMITS.series);
  const chosen = new Set(names);
  const cells: SplitCells['cells'] = new Map();
  for (const r of all) {
    if (r.gk === 0 && r.gs === 0 && chosen.has(r.sp)) addCell(cells, plan, r.k, r.sp, read(r.v));
  }
  const total = all.find((r) => r.gs === 1);
  return { cells, names, combined: total ? read(total.v) : null };
}

/**
 * Ratio Line: per bucket, the aggregate over the events matching `numerator_filters` divided by
 * the one over `denominator_filters` (both within `filters`); null where either is null or the
 * denominator is 0. A bucket is empty when neither side has an event.
 */
async function ratioLine(
  bound: ClickHouseBoundQuery,
  window: TimeWindow,
  granularity: ResolvedGranularity,
  run: ClickHouseRun,
): Promise<{ rows: LineRow[]; combined: number | null; series?: string[] }> {
  const { query } = bound;
  const empty = emptyValue(query.aggregation);
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return { rows: [], combined: null };
  const plan = bucketPlan(granularity, query.IANA_time_zone, lo, hi);
  const params = new ClickHouseParams();
  const m = bound.metric === null ? 'NULL' : numericFieldSql(bound.metric, params);
  const num = filtersSql(query.numerator_filters ?? [], bound, params);
  const den = filtersSql(query.denominator_filters ?? [], bound, params);
  const columns = `countIf(${num}) AS nn, countIf(${den}) AS dn,
    ${aggregateSql(query.aggregation, m, params, num)} AS a,
    ${aggregateSql(query.aggregation, m, params, den)} AS b`;
  const where = inWindow(bound, lo, hi, params);
  type Sides = { nn: number; dn: number; a: unknown; b: unknown };
  // The buckets and, as the empty grouping set, the whole window.
  const all = await rowsOf<Sides & { k: number; g: number }>(
    run,
    `SELECT ${keySql(plan, params)} AS k, ${columns}, grouping(k) AS g
     FROM ${source(run)} WHERE ${where} GROUP BY GROUPING SETS ((k), ())`,
    params,
  );
  const found = all.filter((r) => r.g !== 1);
  const totals = all.filter((r) => r.g === 1);
  const ratio = (r: Sides | undefined) =>
    ratioOf(
      r ? (readAggregate(query.aggregation, r.a) ?? empty) : empty,
      r ? (readAggregate(query.aggregation, r.b) ?? empty) : empty,
    );
  const byKey = byBucketKey(found, plan);
  const sides = plan.buckets.map((bucket) => byKey.get(bucket.key));
  const rows = lineRows(
    plan.buckets,
    query.customizations.hideMissing === true,
    sides.map((r) => (r?.nn ?? 0) + (r?.dn ?? 0) > 0),
    'Ratio',
    sides.map(ratio),
  );
  return { rows, combined: ratio(totals[0]) };
}
