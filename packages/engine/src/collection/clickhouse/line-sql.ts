import { LIMITS } from '@analytics-chart/protocol';
import { EngineError } from '../../engine-error.ts';
import type { ClickHouseBoundQuery } from '../bind/clickhouse/bind-clickhouse-query.ts';
import { UNIT_SHIFT } from '../plan/calendar-units.ts';
import { isAdditive, type LinePlan, type LineWindow } from '../plan/collection-plan.ts';
import { MAX_SPLIT_CELLS } from '../plan/split-series.ts';
import type { BucketPlan, OffsetSegment } from '../plan/time-buckets.ts';
import type { LineForm } from '../shape/line-shape.ts';
import {
  aggregateOrderSql,
  aggregateSql,
  orderColumnsSql,
  sumPartsSql,
} from './clickhouse-aggregate-sql.ts';
import { and } from './conditions-sql.ts';
import { rollupCellsSql, rollupPopulationsSql, rollupWindow } from './rollup-sql.ts';

/**
 * The render stage of the six line kinds on ClickHouse: one statement per window of a line,
 * written from the bound query (fields, filters and their parameters) and the plan (buckets,
 * units), its rows in one of the layouts `shape/line-shape.ts` reads ({@link LineForm}), as
 * DuckDB's `line-sql.ts` writes them. Pure: no key columns, no client. Buckets are keyed from
 * the plan's own offsets of the zone (Temporal's tz data, as on DuckDB) rather than ClickHouse's
 * time-zone tables, which put a second on the wrong date where a clock was set back across
 * midnight (America/Goose_Bay's 00:01 changes of 1987 to 1991).
 */

/** A line statement, the form of its rows, and how run reads its columns. */
export interface ClickHouseLineStatement {
  sql: string;
  params: Record<string, unknown>;
  form: LineForm;
  /** The columns that hold text, which run never reads as a number. */
  text: readonly number[];
  /** The columns that hold a sum's parts as `sumPartsSql` writes them, which run reads. */
  parts: readonly number[];
}

/** The seconds ClickHouse's DateTime64 can represent (1900-01-01 to 2299-12-31), in which it buckets. */
const FIRST_SECOND = -2_208_988_800;
const LAST_SECOND = 10_413_791_999;
/** Days added before an integer division so that every second it buckets is positive. */
const SHIFT_DAYS = 7 * 10_000;

/**
 * The statement of one window of a line, or null where the window has no bucket. `fixedSeries`:
 * the series a compare window keeps; `ranked`: a split line ranked in SQL (after too many cells).
 * A window outside 1900 to 2299 is refused (501).
 */
export function clickHouseLineSql(
  bound: ClickHouseBoundQuery,
  line: LinePlan,
  window: LineWindow,
  fixedSeries: readonly string[] | null,
  ranked: boolean,
): ClickHouseLineStatement | null {
  const plan = window.buckets;
  if (!plan || plan.buckets.length === 0) return null;
  if (window.lo < FIRST_SECOND || window.hi > LAST_SECOND) {
    throw new EngineError(
      501,
      'time series on ClickHouse cover 1900 to 2299 (the range of its DateTime64); choose a window within it',
    );
  }
  const { aggregation } = bound.query;
  const { kind } = line;
  const { filters, compare, numerator, denominator } = bound.where;
  const params = lineParams(bound.params);
  const inWindow = `${bound.inCollection}
    AND timestamp BETWEEN ${params.add('Int64', window.lo)} AND ${params.add('Int64', window.hi)}`;
  const m = bound.metricSql;
  const done = (
    form: LineForm,
    sql: string,
    columns: { text?: number[]; parts?: number[] } = {},
  ): ClickHouseLineStatement => ({
    form,
    sql,
    params: used(params, sql),
    text: columns.text ?? [],
    parts: columns.parts ?? [],
  });
  const exact = aggregation === 'Sum' || aggregation === 'Avg';
  if (!kind.split && kind.value !== 'running') {
    // Count and Sum over the window are the sums of their buckets: one GROUP BY suffices. Avg and
    // percentiles need the window as a whole, which GROUPING SETS adds to the same scan.
    const additive = isAdditive(aggregation);
    const populations: Array<string | undefined> =
      kind.value === 'ratio'
        ? [numerator, denominator]
        : kind.second === 'compare filters'
          ? [undefined, compare]
          : [undefined];
    const where =
      kind.value === 'ratio' ? and(filters, `(${numerator} OR ${denominator})`) : filters;
    // Sums of buckets are also sums of spans of UTC time within them, keyed by a division alone.
    const { units } = window;
    const key = units
      ? `intDiv(timestamp + ${params.add('Int64', UNIT_SHIFT)}, ${params.add('Int64', units.seconds)})`
      : keySql(plan, params);
    const width = aggregation === 'Count' ? 1 : 2;
    const partsAt = exact ? populations.map((_, p) => 1 + width * p) : [];
    // Where rollups give the events' answer, the window reads them (`plan/rollup-eligibility.ts`).
    const read = rollupWindow(
      bound,
      { plan, lo: window.lo, hi: window.hi, key },
      params.add,
      (r) => r.where !== null,
    );
    if (read?.rollup.where) {
      const rw = read.rollup.where;
      const rollupPopulations: Array<string | undefined> =
        kind.value === 'ratio'
          ? [rw.numerator, rw.denominator]
          : kind.second === 'compare filters'
            ? [undefined, rw.compare]
            : [undefined];
      const sql = rollupPopulationsSql(read, {
        where,
        populations,
        rollupWhere:
          kind.value === 'ratio'
            ? and(rw.filters, `(${rw.numerator} OR ${rw.denominator})`)
            : rw.filters,
        rollupPopulations,
      });
      return done('populations', sql, { parts: partsAt });
    }
    // Count's value is its own event count; other aggregations count events beside the value.
    const columns = populations.map((condition, i) =>
      aggregation === 'Count'
        ? `${aggregateSql(aggregation, m, params.values, condition)} AS v${i}`
        : `${aggregateSql(aggregation, m, params.values, condition)} AS v${i}, ${aggregateSql('Count', m, params.values, condition)} AS c${i}`,
    );
    const names = populations.map((_, i) => (aggregation === 'Count' ? `v${i}` : `v${i}, c${i}`));
    // One flat SELECT where the buckets are the groups: each clause ClickHouse plans costs time.
    // The empty grouping set is the whole window, its key NULL as the shape stage reads it.
    const sql = additive
      ? `SELECT ${key} AS k, ${columns.join(', ')}
       FROM ${bound.relation} WHERE ${and(inWindow, where)}
       GROUP BY k`
      : `SELECT if(g = 1, NULL, k), ${names.join(', ')} FROM (
       SELECT ${key} AS k, ${columns.join(', ')}, grouping(k) AS g
       FROM ${bound.relation} WHERE ${and(inWindow, where)}
       GROUP BY GROUPING SETS ((k), ()))`;
    return done('populations', sql, { parts: partsAt });
  }
  const k = keySql(plan, params);
  const sp = bound.splitSql ?? "CAST(NULL, 'Nullable(String)')";
  const base = `SELECT ${sp} AS sp, ${k} AS k, ${m} AS m
    FROM ${bound.relation} WHERE ${and(inWindow, filters)}`;
  // The metric as the statement below names it (`sumPartsSql` reads a missing one as no parts).
  const metric = m === 'NULL' ? 'NULL' : 'm';
  if (!kind.split) {
    // A percentile's buckets bring their values, from which the shape stage takes the growing
    // frame's ranks (`shape/growing-percentiles.ts`).
    const percentile = !['Count', 'Sum', 'Avg'].includes(aggregation);
    return done(
      'running',
      `SELECT k, count(), ${percentile ? 'groupArray(m)' : sumPartsSql(metric)}
       FROM (${base}) GROUP BY k`,
      { parts: percentile ? [] : [2] },
    );
  }
  if (!ranked && (aggregation === 'Count' || exact)) {
    const cells = params.add('UInt32', MAX_SPLIT_CELLS + 1);
    const read =
      bound.splitSql !== null &&
      rollupWindow(
        bound,
        { plan, lo: window.lo, hi: window.hi, key: k },
        params.add,
        (r) => r.where !== null && r.split !== null,
      );
    if (read && bound.splitSql !== null && read.rollup.where) {
      const sql = rollupCellsSql(
        read,
        bound.splitSql,
        { events: filters, rollup: read.rollup.where.filters },
        cells,
      );
      return done('cells', sql, { text: [0], parts: aggregation === 'Count' ? [] : [3] });
    }
    // Flat, as the populations above: the split and key named once, the metric read in place.
    return done(
      'cells',
      `SELECT ${sp} AS sp, ${k} AS k, count()${aggregation === 'Count' ? '' : `, ${sumPartsSql(m)}`}
       FROM ${bound.relation} WHERE ${and(inWindow, filters, 'sp IS NOT NULL')}
       GROUP BY sp, k LIMIT ${cells}`,
      { text: [0], parts: aggregation === 'Count' ? [] : [3] },
    );
  }
  return done('ranked', rankedSql(aggregation, params, base, fixedSeries), {
    text: [1],
    parts: exact ? [3] : [],
  });
}

/**
 * A split line ranked by ClickHouse in one scan grouped three ways: per bucket and series (the
 * cells), per series (their rank) and over every event with the split field (the total). Only
 * the series that may rank among the top 10 (`plan/split-series.ts`'s rule, here beside the other
 * grouping sets: among the first 10 by the lower bound, or the upper bound reaching the 10th
 * lower bound `t`), or the given ones, come back; the shape stage ranks them by exact values.
 * Three SELECTs, the last filtering by QUALIFY: each nested SELECT costs ClickHouse planning time.
 */
function rankedSql(
  aggregation: ClickHouseBoundQuery['query']['aggregation'],
  params: LineParams,
  base: string,
  fixedSeries: readonly string[] | null,
): string {
  const value = aggregateSql(aggregation, 'm', params.values);
  const order = aggregateOrderSql(aggregation, 'm', params.values);
  const cap = params.add('UInt32', LIMITS.series);
  // The series' own rows (the `(sp)` grouping set) ranked among themselves; `t` is the
  // `cap`-th lower bound, NULL or 0 where there are fewer series, whose ranks then all count.
  const ranking = 'PARTITION BY gk, gs ORDER BY o - e DESC NULLS LAST, sp';
  const kept =
    fixedSeries === null
      ? `max(if(gk = 1 AND gs = 0 AND (r <= ${cap} OR o + e >= t), 1, 0)) OVER (PARTITION BY sp) = 1`
      : `sp IN ${params.add('Array(String)', [...fixedSeries])}`;
  // A key that is the value itself is read from the grouped rows (aggregateOrderSql).
  const key = order.key === null ? ', v AS o' : '';
  return `SELECT multiIf(gs = 1, 2, gk = 1, 1, 0), sp, if(gk = 1, NULL, k), v, c FROM (
       SELECT *${key}, row_number() OVER (${ranking}) AS r,
         nth_value(o - e, ${cap}) OVER (${ranking} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS t
       FROM (
         SELECT k, sp, ${value} AS v, count() AS c, ${orderColumnsSql(order)},
           grouping(k) AS gk, grouping(sp) AS gs
         FROM (${base} AND sp IS NOT NULL)
         GROUP BY GROUPING SETS ((k, sp), (sp), ())))
     QUALIFY gs = 1 OR ${kept}`;
}

/**
 * A statement's parameters: the bound query's, and the renderer's own added under names of
 * their own (`l<n>`), written here so that rendering never calls back into another stage.
 */
export function lineParams(bound: Record<string, unknown>) {
  const values: Record<string, unknown> = { ...bound };
  let next = 0;
  return {
    values,
    /** The placeholder of `value` as a `type`. */
    add(type: string, value: unknown): string {
      const name = `l${next++}`;
      values[name] = value;
      return `{${name}:${type}}`;
    },
  };
}

type LineParams = ReturnType<typeof lineParams>;

/** The parameters `sql` holds, so a statement carries none it does not name. */
function used(params: LineParams, sql: string): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(params.values).filter(([name]) => sql.includes(`{${name}:`)),
  );
}

/** The window's UTC offsets as SQL: the one that holds at each row's `timestamp`. */
function offsetSql(segments: readonly OffsetSegment[], params: LineParams): string {
  if (segments.length === 1) return params.add('Int64', segments[0]?.offset ?? 0);
  return `multiIf(${segments
    .slice(1)
    .map(
      (s, i) =>
        `timestamp < ${params.add('Int64', s.from)}, ${params.add('Int64', segments[i]?.offset ?? 0)}`,
    )
    .join(', ')}, ${params.add('Int64', segments[segments.length - 1]?.offset ?? 0)})`;
}

/** The bucket key of `timestamp`, as the plan numbers its buckets. */
function keySql(plan: BucketPlan, params: LineParams): string {
  if (plan.clock) {
    // Each pass of the zone's clock through a minute or hour is one bucket, whatever the size
    // of an offset change; the plan's clock gives each offset's shift.
    const { width, segments } = plan.clock;
    // Where the zone's clock keeps UTC's minutes or hours, the key is a division alone: an added
    // zero is one more column ClickHouse computes per event.
    const aligned = segments.length === 1 && segments[0]?.offset === 0;
    const shifted = aligned
      ? 'toInt64(timestamp)'
      : `toInt64(timestamp) + ${offsetSql(segments, params)}`;
    return `intDiv(${shifted}, ${params.add('Int64', width)})`;
  }
  if (!plan.calendar) throw new Error('a bucket plan without its clock or calendar');
  // The zone's date as days since 1970-01-01, floored in integers: shifted past 1900's wall
  // clocks (negative seconds), divided, shifted back.
  const day = `(intDiv(timestamp + ${offsetSql(plan.calendar.segments, params)} + ${SHIFT_DAYS * 86_400}, 86400) - ${SHIFT_DAYS})`;
  if (plan.granularity === 'Day') return day;
  // Monday weeks numbered as the plan does: day d is in week floor((d + 3) / 7).
  if (plan.granularity === 'Week')
    return `(intDiv(${day} + ${3 + SHIFT_DAYS}, 7) - ${SHIFT_DAYS / 7})`;
  const date = `toDate32(${day})`;
  return `toInt64(toYear(${date})) * 12 + toMonth(${date}) - 1`;
}
