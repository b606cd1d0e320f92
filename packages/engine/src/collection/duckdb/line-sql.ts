import { LIMITS } from '@analytics-chart/protocol';
import { BIGINT, LIST, listValue, VARCHAR } from '../../storage/duckdb/duckdb-api.ts';
import { sumFormSql } from '../../storage/duckdb/exact-sum-sql.ts';
import type { NamedParams, Statement } from '../../storage/duckdb/sql-params.ts';
import type { DuckDbBoundQuery } from '../bind/duckdb/bind-duckdb-query.ts';
import { UNIT_SHIFT } from '../plan/calendar-units.ts';
import { type LinePlan, type LineWindow, QUANTILE } from '../plan/collection-plan.ts';
import { MAX_SPLIT_CELLS, rankCandidatesSql } from '../plan/split-series.ts';
import type { BucketPlan, OffsetSegment } from '../plan/time-buckets.ts';
import type { LineForm } from '../shape/line-shape.ts';
import { aggregateOrderSql, aggregateSql } from './aggregate-sql.ts';
import { groupedPercentiles, type PercentileNeighbors } from './percentile-neighbors-sql.ts';
import { rollupCellsStatement, rollupPopulationsStatement, rollupWindow } from './rollup-sql.ts';

/**
 * The render stage of the six line kinds on DuckDB: one statement per window of a line, written
 * from the bound query (fields, filters and their parameters) and the plan (buckets, units),
 * its rows in one of the layouts `shape/line-shape.ts` reads ({@link LineForm}). Pure: no
 * catalog, no connection. Sum and Avg travel as their exact parts, a struct
 * `{h, m, l, r, n}` (`aggregate-sql.ts`); `cells` reads at most {@link MAX_SPLIT_CELLS} + 1 rows,
 * so that a split with more is ranked by DuckDB instead (`ranked`).
 */

/** A line statement and the form of its rows. */
export interface LineStatement extends Statement {
  form: LineForm;
  /** Rows keyed by bucket even where the window has units (a rollup read's). */
  bucketKeys?: true;
  /**
   * A percentile's window in two statements instead, read in one snapshot: this one picks a value
   * near each group's ranks, `around` counts the values around it, and `rows` gives this
   * statement's rows from both, or null where the counts do not reach a rank (then this
   * statement runs as it is, sorting each group's values).
   */
  neighbors?: PercentileNeighbors;
}

/**
 * The statement of one window of a line, or null where the window has no bucket. `fixedSeries`:
 * the series a compare window keeps; `ranked`: a split line ranked in SQL (after too many cells).
 */
export function lineSql(
  bound: DuckDbBoundQuery,
  line: LinePlan,
  window: LineWindow,
  fixedSeries: readonly string[] | null,
  ranked: boolean,
): LineStatement | null {
  const plan = window.buckets;
  if (!plan || plan.buckets.length === 0) return null;
  const { aggregation } = bound.query;
  const { kind } = line;
  const { filters, compare, numerator, denominator } = bound.where;
  const params: NamedParams = {
    ...bound.params,
    lo: { value: window.lo, type: BIGINT },
    hi: { value: window.hi, type: BIGINT },
  };
  const inWindow = `"timestamp" BETWEEN $lo AND $hi`;
  const m = bound.metricSql;
  if (!kind.split && kind.value !== 'running') {
    // Count and Sum over the window are the sums of their buckets: one GROUP BY suffices. Avg and
    // percentiles need the window as a whole, which GROUPING SETS adds to the same scan.
    const additive = aggregation === 'Count' || aggregation === 'Sum';
    const populations =
      kind.value === 'ratio'
        ? [numerator, denominator]
        : kind.second === 'compare filters'
          ? ['TRUE', compare]
          : ['TRUE'];
    const where =
      kind.value === 'ratio' ? `${filters} AND (${numerator} OR ${denominator})` : filters;
    // Where rollups give the events' answer, the window reads them (`plan/rollup-eligibility.ts`).
    const read = rollupWindow(
      bound,
      { plan, lo: window.lo, hi: window.hi },
      (r) => r.where !== null,
    );
    if (read?.rollup.where) {
      const rw = read.rollup.where;
      const rollupPopulations =
        kind.value === 'ratio'
          ? [rw.numerator, rw.denominator]
          : kind.second === 'compare filters'
            ? ['TRUE', rw.compare]
            : ['TRUE'];
      return {
        form: 'populations',
        bucketKeys: true,
        ...rollupPopulationsStatement(read, {
          where,
          populations,
          rollupWhere:
            kind.value === 'ratio'
              ? `${rw.filters} AND (${rw.numerator} OR ${rw.denominator})`
              : rw.filters,
          rollupPopulations,
        }),
      };
    }
    // Sums of buckets are also sums of spans of UTC time within them, keyed by a division alone.
    const { units } = window;
    if (units) {
      params.shift = { value: UNIT_SHIFT, type: BIGINT };
      params.unit = { value: units.seconds, type: BIGINT };
    }
    const key = units
      ? `(("timestamp" + $shift) // $unit)`
      : bucketKeySql(plan, '"timestamp"', params);
    // Count's value is its own event count; other aggregations count events beside the value.
    const columns = populations.map((condition, i) =>
      aggregation === 'Count'
        ? `${aggregateSql(aggregation, m, condition)} AS v${i}`
        : `${aggregateSql(aggregation, m, condition, bound.sums)} AS v${i}, ${aggregateSql('Count', null, condition)} AS c${i}`,
    );
    const from = `FROM ${bound.relation} WHERE ${inWindow} AND ${where}`;
    const level = QUANTILE[aggregation];
    return {
      form: 'populations',
      sql: `SELECT ${key} AS k, ${columns.join(', ')}
     ${from}
     GROUP BY ${additive ? 'k' : 'GROUPING SETS ((k), ())'}`,
      params,
      ...(level !== undefined && m !== null
        ? { neighbors: linePercentiles(level, key, m, from, populations, params) }
        : {}),
    };
  }
  const k = bucketKeySql(plan, '"timestamp"', params);
  const metric = m ?? 'NULL::DOUBLE';
  if (!kind.split) {
    const base = `SELECT ${k} AS k, ${metric} AS m FROM ${bound.relation}
    WHERE ${inWindow} AND ${filters}`;
    const percentile = !['Count', 'Sum', 'Avg'].includes(aggregation);
    // A percentile's buckets bring their values, from which the shape stage takes the growing
    // frame's ranks (`shape/growing-percentiles.ts`).
    return {
      form: 'running',
      sql: percentile
        ? `SELECT k, count(*), list(m) FILTER (WHERE m IS NOT NULL) FROM (${base}) GROUP BY k`
        : `SELECT k, count(*), ${sumFormSql(bound.sums, 'm')} FROM (${base}) GROUP BY k`,
      params,
    };
  }
  const base = `SELECT ${bound.splitSql ?? 'NULL::VARCHAR'} AS sp, ${k} AS k, ${metric} AS m FROM ${bound.relation}
      WHERE ${inWindow} AND ${filters}`;
  if (!ranked && (aggregation === 'Count' || aggregation === 'Sum' || aggregation === 'Avg')) {
    const read =
      bound.splitSql !== null &&
      rollupWindow(
        bound,
        { plan, lo: window.lo, hi: window.hi },
        (r) => r.where !== null && r.split !== null,
      );
    if (read && bound.splitSql !== null && read.rollup.where) {
      return {
        form: 'cells',
        ...rollupCellsStatement(
          read,
          bound.splitSql,
          { events: filters, rollup: read.rollup.where.filters },
          MAX_SPLIT_CELLS + 1,
        ),
      };
    }
    params.cells = { value: MAX_SPLIT_CELLS + 1, type: BIGINT };
    return {
      form: 'cells',
      sql: `SELECT sp, k, count(*)${aggregation === 'Count' ? '' : `, ${sumFormSql(bound.sums, 'm')}`}
     FROM (${base}) WHERE sp IS NOT NULL
     GROUP BY sp, k LIMIT $cells`,
      params,
    };
  }
  const agg = aggregateSql(aggregation, 'm', 'TRUE', bound.sums);
  const order = aggregateOrderSql(aggregation, 'm');
  if (fixedSeries) params.fixed = { value: listValue([...fixedSeries]), type: LIST(VARCHAR) };
  params.series = { value: LIMITS.series, type: BIGINT };
  const chosen = fixedSeries ? 'list_contains($fixed, sp)' : 'TRUE';
  // Every series that may rank among the top 10; the shape stage ranks them by their exact values.
  const top = rankCandidatesSql(
    'sp, v',
    `SELECT sp, ${agg} AS v, ${order.key} AS o, ${order.slack} AS e FROM base WHERE ${chosen} GROUP BY sp`,
    '$series',
  );
  const level = QUANTILE[aggregation];
  return {
    form: 'ranked',
    ...(level !== undefined && m !== null && !ranked
      ? { neighbors: splitPercentiles(level, base, params) }
      : {}),
    sql: `WITH base AS (SELECT * FROM (${base}) WHERE sp IS NOT NULL),
          top AS (${top})
     SELECT 0 AS part, sp, k, ${agg} AS v, count(*) AS c FROM base WHERE sp IN (SELECT sp FROM top) GROUP BY sp, k
     UNION ALL SELECT 1, sp, NULL, v, NULL FROM top
     UNION ALL SELECT 2, NULL, NULL, ${agg}, count(*) FROM base`,
    params,
  };
}

/**
 * A percentile line's buckets and window in the `populations` layout, from values selected near
 * each group's ranks: `groupedPercentiles`, per population.
 */
function linePercentiles(
  level: number,
  key: string,
  m: string,
  from: string,
  populations: readonly string[],
  params: NamedParams,
): PercentileNeighbors {
  return groupedPercentiles({
    level,
    base: `SELECT ${key} AS k, ${m} AS m, ${populations.map((c, i) => `(${c}) AS f${i}`).join(', ')}
     ${from}`,
    keys: [{ name: 'k', text: false }],
    coarsest: 0,
    populations: populations.map((c, i) => (c === 'TRUE' ? 'TRUE' : `f${i}`)),
    maxGroups: MAX_SPLIT_CELLS,
    params,
    layout: ({ keys: [k], values }) => [k, ...values.flatMap((v) => [v.value, v.events])],
  });
}

/**
 * A split percentile line's cells, series and window in the `ranked` layout, every series and
 * cell of them (the shape stage ranks the series by these exact values), from values selected
 * near each group's ranks: `groupedPercentiles`.
 */
function splitPercentiles(level: number, base: string, params: NamedParams): PercentileNeighbors {
  return groupedPercentiles({
    level,
    base: `SELECT * FROM (${base}) WHERE sp IS NOT NULL`,
    keys: [
      { name: 'sp', text: true },
      { name: 'k', text: false },
    ],
    coarsest: 0,
    maxGroups: MAX_SPLIT_CELLS,
    params,
    layout: ({ keys: [sp, k], depth, values: [one] }) =>
      depth === 2
        ? [0, sp, k, one?.value, one?.events]
        : depth === 1
          ? [1, sp, null, one?.value, null]
          : [2, null, null, one?.value, one?.events],
  });
}

const DAY = 86_400;
const WEEK = 7 * DAY;

/**
 * The bucket plan's key as a DuckDB integer expression of `ts` (a BIGINT Unix-seconds
 * expression): integer arithmetic with a CASE over the window's offsets, a single integer where
 * they all agree. Its integers are named parameters `$k0`, `$k1`, … of `named`.
 */
export function bucketKeySql(plan: BucketPlan, ts: string, named: NamedParams): string {
  const params = {
    integer: (value: number) => {
      const name = `k${Object.keys(named).length}`;
      named[name] = { value, type: BIGINT };
      return `$${name}`;
    },
  };
  if (plan.clock) {
    const { width, segments } = plan.clock;
    return `((${ts} + ${piecewiseSql(ts, segments, (s) => s.offset, params)}) // ${params.integer(width)})`;
  }
  if (!plan.calendar) return '0';
  const { segments, biasDays } = plan.calendar;
  const unbias = biasDays ? ` - ${biasDays}` : '';
  const local = `(${ts} + ${piecewiseSql(ts, segments, (s) => s.offset + biasDays * DAY, params)})`;
  if (plan.granularity === 'Day') return `(${local} // ${params.integer(DAY)}${unbias})`;
  if (plan.granularity === 'Week') {
    // 1970-01-01 was a Thursday: day d belongs to the week starting on day 7 * ((d + 3) // 7) - 3.
    return `((${local} + ${params.integer(3 * DAY)}) // ${params.integer(WEEK)}${biasDays ? ` - ${biasDays / 7}` : ''})`;
  }
  // Month: the wall date from the local day number, then year * 12 + month - 1.
  const date = `(DATE '1970-01-01' + CAST(${local} // ${params.integer(DAY)}${unbias} AS INTEGER))`;
  return `(year(${date}) * 12 + month(${date}) - 1)`;
}

/** A SQL expression choosing, per row, the value that holds at `ts` among the segments. */
function piecewiseSql(
  ts: string,
  segments: readonly OffsetSegment[],
  value: (s: OffsetSegment) => number,
  params: { integer: (value: number) => string },
): string {
  const first = segments[0];
  if (!first) return '0';
  const values = segments.map(value);
  if (values.every((v) => v === values[0])) return params.integer(values[0] ?? 0);
  const branches = segments
    .slice(1)
    .map((s, i) => `WHEN ${ts} < ${params.integer(s.from)} THEN ${params.integer(values[i] ?? 0)}`);
  return `(CASE ${branches.join(' ')} ELSE ${params.integer(values[values.length - 1] ?? 0)} END)`;
}
