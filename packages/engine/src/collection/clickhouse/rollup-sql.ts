import type { Aggregation } from '@analytics-chart/protocol';
import {
  exponentSumsSql,
  LIMB_PARTS_ROW,
  sumPartAggregatesSql,
  sumPartsTextSql,
} from '../../storage/clickhouse/clickhouse-exact-sum-sql.ts';
import type { ClickHouseBoundQuery } from '../bind/clickhouse/bind-clickhouse-query.ts';
import type { ClickHouseBoundRollup } from '../bind/clickhouse/bind-clickhouse-rollup.ts';
import {
  CLICKHOUSE_MIN_ROLLUP_EVENTS,
  type RollupRead,
  rollupRead,
} from '../plan/rollup-eligibility.ts';
import type { BucketPlan } from '../plan/time-buckets.ts';
import { and } from './conditions-sql.ts';

/**
 * Statements that read a window's whole spans from the workspace's rollups and the seconds at
 * its edges from the events (`plan/rollup-eligibility.ts` says when that is the events' answer),
 * in the layouts and column types the raw statements of `line-sql.ts`, `single-value-sql.ts` and
 * `categories-sql.ts` have. Each part adds up,
 * per bucket (and split value), the count and a sum's five parts
 * (`storage/clickhouse/clickhouse-exact-sum-sql.ts`); the outer statement adds them up again and
 * writes the same text `sumPartsSql` writes, as integer sums do not depend on how rows were
 * grouped. A span is keyed by its first second, which shares its bucket with the rest of it.
 * Pure, like the rest of the render stage.
 */

/** How the window is read, and the renderer's parameters and bucket key. */
export interface ClickHouseRollupWindow {
  read: RollupRead;
  rollup: ClickHouseBoundRollup;
  bound: ClickHouseBoundQuery;
  aggregation: Aggregation;
  /** The bucket key of a row's `timestamp` (seconds); `0` where the window is one value. */
  key: string;
  /** The placeholder of `value` as a `type`, among the statement's parameters. */
  add(type: string, value: unknown): string;
}

/**
 * The rollup read of the window `lo`…`hi` (cut into `plan`'s buckets, keyed by `key`, or one
 * value over it where null), where the workspace keeps rollups that hold what the statement
 * reads (`holds`, and for Sum and Avg the metric) and `plan/rollup-eligibility.ts` finds their
 * answer the events'; `add` places a parameter among the statement's.
 */
export function rollupWindow(
  bound: ClickHouseBoundQuery,
  window: { plan: BucketPlan | null; lo: number; hi: number; key: string },
  add: ClickHouseRollupWindow['add'],
  holds: (rollup: ClickHouseBoundRollup) => boolean,
): ClickHouseRollupWindow | undefined {
  const { rollup } = bound;
  if (!rollup) return undefined;
  const { aggregation } = bound.query;
  const read = rollupRead({
    aggregation,
    readable: holds(rollup),
    metricKept: bound.metricSql !== 'NULL' && rollup.sum !== null,
    plan: window.plan,
    lo: window.lo,
    hi: window.hi,
    spanSeconds: rollup.spanSeconds,
    eventsPerSpan: rollup.eventsPerSpan,
    rowsPerEvent: rollup.rowsPerEvent,
    // Weighed, a window of any length reads rollups once it holds events enough to repay them.
    ...(rollup.weighed && isWeighed(aggregation)
      ? { minEvents: CLICKHOUSE_MIN_ROLLUP_EVENTS[aggregation], maxSpans: Number.POSITIVE_INFINITY }
      : {}),
  });
  return read && { read, rollup, bound, aggregation, key: window.key, add };
}

/** Aggregations that rollups answer, and so that are weighed. */
const isWeighed = (a: Aggregation): a is keyof typeof CLICKHOUSE_MIN_ROLLUP_EVENTS =>
  Object.hasOwn(CLICKHOUSE_MIN_ROLLUP_EVENTS, a);

/** The five parts' columns of a rollup row, summed per group where `condition` holds. */
function rollupParts(prefix: string, i: number, condition: string | undefined): string {
  const only = condition === undefined ? '' : 'If';
  const when = condition === undefined ? '' : `, ${condition}`;
  return ['h', 'm', 'l', 'n']
    .map((limb) => `sum${only}(${prefix}_${limb}${when}) AS ${limb}${i}`)
    .concat(`groupArrayArray${only}(${prefix}_r${when}) AS r${i}`)
    .join(', ');
}

/** The five parts of the events' metric, per group where `condition` holds. */
function eventParts(metric: string, i: number, condition: string | undefined): string {
  const p = sumPartAggregatesSql(metric, condition);
  return `${p.h} AS h${i}, ${p.m} AS m${i}, ${p.l} AS l${i}, ${p.n} AS n${i}, ${p.r} AS r${i}`;
}

/** The added parts of population `i` as the one text of the raw statement. */
const addedParts = (i: number) =>
  sumPartsTextSql({
    h: `sum(h${i})`,
    m: `sum(m${i})`,
    l: `sum(l${i})`,
    n: `sum(n${i})`,
    r: `groupArrayArray(r${i})`,
  });

/** The rollup rows of the window's whole spans, each with the first second of its span. */
function spanRows(w: ClickHouseRollupWindow, where: string): string {
  const { rollup, read } = w;
  return `(SELECT *, span * ${w.add('Int64', rollup.spanSeconds)} AS timestamp FROM ${rollup.table}
     WHERE ${and(w.bound.inCollection, `span BETWEEN ${w.add('Int64', read.firstSpan)} AND ${w.add('Int64', read.lastSpan)}`, where)})`;
}

/**
 * The events of the window's edges that `where` keeps, as one relation (none without edges):
 * ClickHouse plans each part of a statement anew, which costs more than reading an edge's rows.
 */
function edgeRows(w: ClickHouseRollupWindow, where: string): string[] {
  if (w.read.rawEdges.length === 0) return [];
  const ranges = w.read.rawEdges.map(
    ([lo, hi]) => `timestamp BETWEEN ${w.add('Int64', lo)} AND ${w.add('Int64', hi)}`,
  );
  return [
    `${w.bound.relation} WHERE ${and(w.bound.inCollection, `(${ranges.join(' OR ')})`, where)}`,
  ];
}

/**
 * A window's value per bucket as `(k, v0, …)` rows, or `(k, v0, c0, …)` beside Count, one
 * population per condition (`populations` over the events and `rollupPopulations` over the
 * rollups, undefined for every row; `where` and `rollupWhere` what every row must meet), with
 * the whole window's row (key NULL) for Avg, as the raw statement has it.
 */
export function rollupPopulationsSql(
  w: ClickHouseRollupWindow,
  conditions: {
    where: string;
    populations: ReadonlyArray<string | undefined>;
    rollupWhere: string;
    rollupPopulations: ReadonlyArray<string | undefined>;
  },
): string {
  const counted = w.aggregation === 'Count';
  const prefix = w.rollup.sum as string;
  const spanColumns = conditions.rollupPopulations.map((c, i) => {
    const count = `${c === undefined ? 'sum(n)' : `sumIf(n, ${c})`} AS c${i}`;
    return counted ? count : `${count}, ${rollupParts(prefix, i, c)}`;
  });
  const parts = [
    `SELECT ${w.key} AS k, ${spanColumns.join(', ')} FROM ${spanRows(w, conditions.rollupWhere)} GROUP BY k`,
  ];
  const m = w.bound.metricSql;
  const edgeColumns = conditions.populations.map((c, i) => {
    const count = `${c === undefined ? 'count()' : `countIf(${c})`} AS c${i}`;
    return counted ? count : `${count}, ${eventParts(m, i, c)}`;
  });
  for (const rows of edgeRows(w, conditions.where)) {
    parts.push(`SELECT ${w.key} AS k, ${edgeColumns.join(', ')} FROM ${rows} GROUP BY k`);
  }
  const columns = conditions.populations.map((_, i) =>
    counted
      ? `toFloat64(sum(c${i})) AS v${i}`
      : `${addedParts(i)} AS v${i}, toFloat64(sum(c${i})) AS c${i}`,
  );
  const names = conditions.populations.map((_, i) => (counted ? `v${i}` : `v${i}, c${i}`));
  const additive = w.aggregation !== 'Avg';
  return `SELECT ${additive ? 'k' : 'if(g = 1, NULL, k)'}, ${names.join(', ')} FROM (
     SELECT k, ${columns.join(', ')}${additive ? '' : ', grouping(k) AS g'}
     FROM (${parts.join(' UNION ALL ')})
     GROUP BY ${additive ? 'k' : 'GROUPING SETS ((k), ())'})`;
}

/**
 * A split window's cells as `(sp, k, count[, parts])` rows, at most `cells` (a placeholder) of
 * them, from the rollups' column of the split key and the events' split form (`splitSql`), under
 * the filters (`filters` over the events, `rollupFilters` over the rollups).
 */
export function rollupCellsSql(
  w: ClickHouseRollupWindow,
  splitSql: string,
  filters: { events: string; rollup: string },
  cells: string,
): string {
  const counted = w.aggregation === 'Count';
  const sp = w.rollup.split as string;
  const parts = [
    `SELECT ${sp} AS sp, ${w.key} AS k, sum(n) AS c0${
      counted ? '' : `, ${rollupParts(w.rollup.sum as string, 0, undefined)}`
    } FROM ${spanRows(w, and(`${sp} IS NOT NULL`, filters.rollup))} GROUP BY sp, k`,
  ];
  // As the raw statement: the events' split, key and metric first, then their cells.
  for (const rows of edgeRows(w, filters.events)) {
    parts.push(
      `SELECT sp, k, count() AS c0${counted ? '' : `, ${eventParts('m', 0, undefined)}`}
       FROM (SELECT ${splitSql} AS sp, ${w.key} AS k, ${w.bound.metricSql} AS m FROM ${rows})
       WHERE sp IS NOT NULL GROUP BY sp, k`,
    );
  }
  return `SELECT sp, k, sum(c0)${counted ? '' : `, ${addedParts(0)}`}
     FROM (${parts.join(' UNION ALL ')}) GROUP BY sp, k LIMIT ${cells}`;
}

/**
 * A Sum's or Avg's parts over the whole window as `exponentSumsSql`'s rows: the rollups' limb
 * parts as one row `se` {@link LIMB_PARTS_ROW}, beside the edges' significands per sign and
 * exponent, which the run stage adds up as one sum (`clickhouse-events.ts`). The edges' limbs
 * would be exact too, but ClickHouse plans their dozen steps anew in each part of a statement.
 */
export function rollupExponentSumsSql(
  w: ClickHouseRollupWindow,
  filters: { events: string; rollup: string },
): string {
  const p = w.rollup.sum as string;
  const limbs = sumPartsTextSql({
    h: `sum(${p}_h)`,
    m: `sum(${p}_m)`,
    l: `sum(${p}_l)`,
    n: `sum(${p}_n)`,
    r: `groupArrayArray(${p}_r)`,
  });
  const sums = exponentSumsSql(w.bound.metricSql);
  // The limb row's count is in its text; its third column only keeps the rows' shape.
  const parts = [
    `SELECT toUInt16(${LIMB_PARTS_ROW}), ${limbs}, toUInt64(0) FROM ${spanRows(w, filters.rollup)}`,
  ];
  for (const rows of edgeRows(w, and(filters.events, sums.where))) {
    parts.push(`SELECT ${sums.select} FROM ${rows} ${sums.groupBy}`);
  }
  return parts.join(' UNION ALL ');
}

/**
 * The whole window's value as one row `(v)`, or, where `splitSql` (the events' split form) is
 * given, per split value as `(sp, v)` rows (every split value: a rolled-up key has few), as the
 * raw Single Value and categories statements have them, under the filters (`events` over the
 * events, `rollup` over the rollups). Count's `v` is the count, Sum's and Avg's the parts' text.
 */
export function rollupTotalsSql(
  w: ClickHouseRollupWindow,
  filters: { events: string; rollup: string },
  splitSql: string | null,
): string {
  const counted = w.aggregation === 'Count';
  const split = splitSql !== null;
  const sp = w.rollup.split as string;
  const parts = [
    `SELECT ${split ? `${sp} AS sp, ` : ''}sum(n) AS c0${
      counted ? '' : `, ${rollupParts(w.rollup.sum as string, 0, undefined)}`
    } FROM ${spanRows(w, split ? and(`${sp} IS NOT NULL`, filters.rollup) : filters.rollup)}${split ? ' GROUP BY sp' : ''}`,
  ];
  // As the raw statement: the events' split and metric first, then their value.
  for (const rows of edgeRows(w, filters.events)) {
    parts.push(
      `SELECT ${split ? 'sp, ' : ''}count() AS c0${counted ? '' : `, ${eventParts('m', 0, undefined)}`}
       FROM (SELECT ${split ? `${splitSql} AS sp, ` : ''}${w.bound.metricSql} AS m FROM ${rows})${
         split ? ' WHERE sp IS NOT NULL GROUP BY sp' : ''
       }`,
    );
  }
  const value = counted ? 'toFloat64(sum(c0))' : addedParts(0);
  const rows = parts.join(' UNION ALL ');
  return split
    ? `SELECT sp, ${value} FROM (${rows}) GROUP BY sp`
    : `SELECT ${value} FROM (${rows})`;
}
