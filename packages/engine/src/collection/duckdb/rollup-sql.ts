import type { Aggregation } from '@analytics-chart/protocol';
import { BIGINT } from '../../storage/duckdb/duckdb-api.ts';
import { valuePartsRelation } from '../../storage/duckdb/exact-sum-sql.ts';
import { foldedHighSql } from '../../storage/duckdb/rollup-sum-digits.ts';
import type { NamedParams, Statement } from '../../storage/duckdb/sql-params.ts';
import type { BoundRollup, DuckDbBoundQuery } from '../bind/duckdb/bind-duckdb-query.ts';
import { type RollupRead, rollupRead } from '../plan/rollup-eligibility.ts';
import type { BucketPlan } from '../plan/time-buckets.ts';
import { bucketKeySql } from './line-sql.ts';

/**
 * Statements that read a window's whole spans from the rollups of the collection and the
 * seconds at its edges from the events (`plan/rollup-eligibility.ts` says when that is the
 * events' answer), in the layouts the raw statements have (`shape/line-shape.ts`,
 * `shape/single-value-shape.ts`, `shape/categories-shape.ts`). The rollup
 * rows and the edges' events are added up in one aggregation per bucket (and split value):
 * counts, and a sum's parts as `exact-sum-sql.ts` writes them, whose limbs and off-grid values
 * re-add to the same exact sum whichever rows carried them. Rows are keyed by bucket, a span by
 * its first second, which shares its bucket with the rest of it. Pure, like the rest of the
 * render stage.
 */

/** How the window is read: the spans, the bound query, the plan and the metric's numeric form. */
export interface RollupWindow {
  /** The window's buckets, or null where the answer is one value over the whole window. */
  plan: BucketPlan | null;
  read: RollupRead;
  rollup: BoundRollup;
  bound: DuckDbBoundQuery;
  aggregation: Aggregation;
  /** The metric's numeric form over the events (Sum, Avg). */
  m: string | null;
}

/**
 * The rollup read of the window `lo`…`hi` (cut into `plan`'s buckets, or one value over it where
 * null), where the workspace keeps rollups that hold what the statement reads (`holds`, and for
 * Sum and Avg the metric) and `plan/rollup-eligibility.ts` finds their answer the events'.
 */
export function rollupWindow(
  bound: DuckDbBoundQuery,
  window: { plan: BucketPlan | null; lo: number; hi: number },
  holds: (rollup: BoundRollup) => boolean,
): RollupWindow | undefined {
  const { rollup } = bound;
  if (!rollup) return undefined;
  const { plan, lo, hi } = window;
  const { aggregation } = bound.query;
  const m = bound.metricSql;
  const read = rollupRead({
    aggregation,
    readable: holds(rollup),
    metricKept: m !== null && rollup.sum !== null,
    plan,
    lo,
    hi,
    spanSeconds: rollup.spanSeconds,
    eventsPerSpan: rollup.eventsPerSpan,
    rowsPerEvent: rollup.rowsPerEvent,
  });
  return read && { plan, read, rollup, bound, aggregation, m };
}

/**
 * The columns a rollup row brings to the statement's one aggregation: its count and its sum's
 * parts as they were added up (its digits as limbs `h`, `m`, `l` and a top digit `t`,
 * `storage/duckdb/rollup-sum-digits.ts`).
 */
function rollupPartsSql(w: RollupWindow): string {
  if (w.aggregation === 'Count') return 'n AS c';
  const p = w.rollup.sum as string;
  return `n AS c, ${p}_d3 AS t, ${p}_d2 AS h, ${p}_d1 AS m, ${p}_d0 AS l, ${p}_r AS r, ${p}_n AS n`;
}

/**
 * The edges' events as rows of the rollups' columns, as one relation, or none where the window
 * has no edges (their parameters added to `params`): `narrow` reads, per edge, `"timestamp"`,
 * the columns `before` and `after` and, for a sum, the metric (`value`, as `v`), one branch per
 * edge so that each skips row groups by its own range; over their union the bucket key `k`, a
 * 1 for the count and the metric's share ({@link valuePartsRelation}, no top digit) are written
 * once, since DuckDB plans the whole text again at every run. Columns: `before`, `k`, the
 * parts, `after`.
 */
function edgeRowsSql(
  w: RollupWindow,
  params: NamedParams,
  keyOf: (ts: string) => string,
  narrow: (range: string, value: string) => string,
  columns: { before: readonly string[]; after: readonly string[] },
): string[] {
  const ranges = edges(w, params);
  if (ranges.length === 0) return [];
  const counted = w.aggregation === 'Count';
  const union = ranges
    .map((range) => narrow(range, counted ? '' : `, ${w.m as string} AS v`))
    .join(' UNION ALL ');
  const carry = [...columns.before, 'k', ...columns.after];
  const keyed = `SELECT ${[...columns.before, `${keyOf('"timestamp"')} AS k`, ...columns.after, ...(counted ? [] : ['v'])].join(', ')} FROM (${union})`;
  const parts = counted ? '1 AS c' : '1 AS c, 0::BIGINT AS t, h, m, l, r, n';
  const list = [...columns.before, 'k', parts, ...columns.after].join(', ');
  return [`SELECT ${list} FROM (${counted ? keyed : valuePartsRelation(keyed, carry)})`];
}

/** The rows' count, added up where `pick` (a boolean column, or null: every row) holds. */
function addedCountSql(pick: string | null): string {
  return `coalesce(sum(c)${pick === null ? '' : ` FILTER (WHERE ${pick})`}, 0)::BIGINT`;
}

/**
 * The rows' sum parts, added up into the struct `plan/exact-sum.ts` reads, where `pick` holds:
 * the top digits fold into the high limb.
 */
function addedPartsSql(pick: string | null): string {
  const only = pick === null ? '' : ` FILTER (WHERE ${pick})`;
  const limb = (l: string) => `'${l}': sum(${l})${only}::HUGEINT`;
  const rest = `flatten(list(r) FILTER (WHERE ${pick === null ? '' : `${pick} AND `}r IS NOT NULL))`;
  return `{'h': ${foldedHighSql('h', 't', only)}, ${limb('m')}, ${limb('l')}, 'r': ${rest}, 'n': sum(n)${only}::BIGINT}`;
}

/**
 * The parameters of the spans read and a bucket key over seconds (0 without buckets): rows are
 * keyed by bucket, not by the window's units, because the rollups' rows are few and a row per
 * bucket is less to read.
 */
function keyed(w: RollupWindow): { params: NamedParams; keyOf: (ts: string) => string } {
  const { rollup, read, plan } = w;
  const params: NamedParams = {
    ...w.bound.params,
    rollup_span: { value: rollup.spanSeconds, type: BIGINT },
    rollup_id: { value: rollup.collectionId, type: BIGINT },
    rollup_first: { value: read.firstSpan, type: BIGINT },
    rollup_last: { value: read.lastSpan, type: BIGINT },
  };
  return { params, keyOf: (ts) => (plan ? bucketKeySql(plan, ts, params) : '0') };
}

/** The rollups' rows of the window's whole spans. */
const SPANS = `collection_id = $rollup_id AND span BETWEEN $rollup_first AND $rollup_last`;

/** The edges' ranges of seconds, each its own narrow range that DuckDB skips row groups by. */
function edges(w: RollupWindow, params: NamedParams): string[] {
  return w.read.rawEdges.map(([lo, hi], i) => {
    params[`edge${i}_lo`] = { value: lo, type: BIGINT };
    params[`edge${i}_hi`] = { value: hi, type: BIGINT };
    return `"timestamp" BETWEEN $edge${i}_lo AND $edge${i}_hi`;
  });
}

/**
 * A window's value per bucket as `(k, v0, …)` rows, or `(k, v0, c0, …)` beside Count, keyed by
 * bucket, one population per condition (`populations` over the events, `rollupPopulations` the
 * same over the rollups' keys, and `where`, `rollupWhere` what every row must meet); `additive`
 * (Count, Sum) or not, which adds the whole window's row, as the raw statement does. The rollup
 * rows and the edges' events are added up in one aggregation, each population's rows picked by
 * a boolean column.
 */
export function rollupPopulationsStatement(
  w: RollupWindow,
  conditions: {
    where: string;
    populations: readonly string[];
    rollupWhere: string;
    rollupPopulations: readonly string[];
  },
): Statement {
  const { params, keyOf } = keyed(w);
  const counted = w.aggregation === 'Count';
  // Population i's rows carry a boolean `p<i>`, unless it holds every row of both lists.
  const picked = conditions.populations.map(
    (c, i) => c !== 'TRUE' || conditions.rollupPopulations[i] !== 'TRUE',
  );
  const picks = (list: readonly string[]) =>
    list.map((c, i) => (picked[i] ? `, (${c}) AS p${i}` : '')).join('');
  const parts = [
    `SELECT ${keyOf('(span * $rollup_span)')} AS k, ${rollupPartsSql(w)}${picks(conditions.rollupPopulations)}
     FROM ${w.rollup.table} WHERE ${SPANS} AND ${conditions.rollupWhere}`,
  ];
  parts.push(
    ...edgeRowsSql(
      w,
      params,
      keyOf,
      (range, value) =>
        `SELECT "timestamp"${value}${picks(conditions.populations)}
       FROM ${w.bound.relation} WHERE ${range} AND ${conditions.where}`,
      { before: [], after: picked.flatMap((p, i) => (p ? [`p${i}`] : [])) },
    ),
  );
  const columns = conditions.populations.map((_, i) => {
    const pick = picked[i] ? `p${i}` : null;
    return counted
      ? `${addedCountSql(pick)} AS v${i}`
      : `${addedPartsSql(pick)} AS v${i}, ${addedCountSql(pick)} AS c${i}`;
  });
  const additive = w.aggregation !== 'Avg';
  return {
    sql: `SELECT k, ${columns.join(', ')} FROM (${parts.join(' UNION ALL ')})
     GROUP BY ${additive ? 'k' : 'GROUPING SETS ((k), ())'}`,
    params,
  };
}

/**
 * A split window's cells as `(sp, k, count[, parts])` rows, at most `cells` of them, from the
 * rollups' column of the split key and the events' split form (`splitSql`), under the
 * filters (`filters` over the events, `rollupFilters` over the rollups).
 */
export function rollupCellsStatement(
  w: RollupWindow,
  splitSql: string,
  filters: { events: string; rollup: string },
  cells: number,
): Statement {
  const { params, keyOf } = keyed(w);
  const counted = w.aggregation === 'Count';
  const sp = w.rollup.split as string;
  const parts = [
    `SELECT ${sp} AS sp, ${keyOf('(span * $rollup_span)')} AS k, ${rollupPartsSql(w)}
     FROM ${w.rollup.table} WHERE ${SPANS} AND ${sp} IS NOT NULL AND ${filters.rollup}`,
  ];
  parts.push(
    ...edgeRowsSql(
      w,
      params,
      keyOf,
      (range, value) =>
        `SELECT "timestamp", ${splitSql} AS sp${value}
       FROM ${w.bound.relation} WHERE ${range} AND ${filters.events} AND (${splitSql}) IS NOT NULL`,
      { before: ['sp'], after: [] },
    ),
  );
  params.cells = { value: cells, type: BIGINT };
  const added = `sum(c)::BIGINT${counted ? '' : `, ${addedPartsSql(null)}`}`;
  return {
    sql: `SELECT sp, k, ${added} FROM (${parts.join(' UNION ALL ')}) GROUP BY sp, k LIMIT $cells`,
    params,
  };
}

/**
 * The whole window's value as one row `(v)`, or, where `splitSql` (the events' split form) is
 * given, per split value as `(sp, v)` rows (every split value: a rolled-up key has few), as the
 * raw Single Value and categories statements have them, under the filters (`events` over the
 * events, `rollup` over the rollups). Count's `v` is the count, Sum's and Avg's the parts.
 */
export function rollupTotalsStatement(
  w: RollupWindow,
  filters: { events: string; rollup: string },
  splitSql: string | null,
): Statement {
  const { params, keyOf } = keyed(w);
  const split = splitSql !== null;
  const sp = w.rollup.split as string;
  const parts = [
    `SELECT ${split ? `${sp} AS sp, ` : ''}0 AS k, ${rollupPartsSql(w)}
     FROM ${w.rollup.table} WHERE ${SPANS} AND ${split ? `${sp} IS NOT NULL AND ` : ''}${filters.rollup}`,
  ];
  parts.push(
    ...edgeRowsSql(
      w,
      params,
      keyOf,
      (range, value) =>
        `SELECT "timestamp"${split ? `, ${splitSql} AS sp` : ''}${value}
       FROM ${w.bound.relation} WHERE ${range} AND ${filters.events}${split ? ` AND (${splitSql}) IS NOT NULL` : ''}`,
      { before: split ? ['sp'] : [], after: [] },
    ),
  );
  const value = w.aggregation === 'Count' ? addedCountSql(null) : addedPartsSql(null);
  const rows = parts.join(' UNION ALL ');
  return {
    sql: split
      ? `SELECT sp, ${value} FROM (${rows}) GROUP BY sp`
      : `SELECT ${value} FROM (${rows})`,
    params,
  };
}
