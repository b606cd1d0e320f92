import type { Aggregation } from '@analytics-chart/protocol';
import { BIGINT } from '../../storage/duckdb/duckdb-api.ts';
import { sumPartsSql } from '../../storage/duckdb/exact-sum-sql.ts';
import type { NamedParams, Statement } from '../../storage/duckdb/sql-params.ts';
import type { BoundRollup, DuckDbBoundQuery } from '../bind/duckdb/bind-duckdb-query.ts';
import { type CalendarUnits, UNIT_SHIFT } from '../plan/calendar-units.ts';
import type { RollupRead } from '../plan/rollup-eligibility.ts';
import type { BucketPlan } from '../plan/time-buckets.ts';
import { bucketKeySql } from './line-sql.ts';

/**
 * Statements that read a window's whole spans from the rollups of the collection and the
 * seconds at its edges from the events (`plan/rollup-eligibility.ts` says when that is the
 * events' answer), in the layouts the raw statements have (`shape/line-shape.ts`). Each part
 * adds up per bucket (and split value) what the outer statement adds up again: counts, and a
 * sum's parts as `aggregate-sql.ts` writes them, whose limbs and off-grid values re-add to the
 * same exact sum whichever rows carried them. Rows are keyed as the raw statement keys them; a
 * span by its first second, which shares its unit and bucket with the rest of it. Pure, like
 * the rest of the render stage.
 */

/** How the window is read: the spans, the bound query, the plan and the metric's numeric form. */
export interface RollupWindow {
  plan: BucketPlan;
  read: RollupRead;
  rollup: BoundRollup;
  bound: DuckDbBoundQuery;
  aggregation: Aggregation;
  /** The metric's numeric form over the events (Sum, Avg). */
  m: string | null;
}

/** A rollup sum's parts per group, restricted to the rows where `condition` holds. */
function rollupPartsSql(prefix: string, condition: string): string {
  const only = condition === 'TRUE' ? '' : ` FILTER (WHERE ${condition})`;
  const limb = (l: string) => `'${l}': sum(${prefix}_${l})${only}`;
  return `{${limb('h')}, ${limb('m')}, ${limb('l')}, 'r': flatten(list(${prefix}_r) FILTER (WHERE (${condition}) AND ${prefix}_r IS NOT NULL)), ${limb('n')}}`;
}

/** The parts' column `s` of the statement's parts, added up. */
function addedPartsSql(s: string): string {
  const limb = (l: string) => `'${l}': sum(${s}.${l})::HUGEINT`;
  return `{${limb('h')}, ${limb('m')}, ${limb('l')}, 'r': flatten(list(${s}.r) FILTER (WHERE ${s}.r IS NOT NULL)), 'n': sum(${s}.n)::BIGINT}`;
}

/** The parameters of the spans read and a bucket key over seconds (`units` where the window has them). */
function keyed(
  w: RollupWindow,
  units: CalendarUnits | undefined,
): { params: NamedParams; keyOf: (ts: string) => string } {
  const { rollup, read, plan } = w;
  const params: NamedParams = {
    ...w.bound.params,
    rollup_span: { value: rollup.spanSeconds, type: BIGINT },
    rollup_id: { value: rollup.collectionId, type: BIGINT },
    rollup_first: { value: read.firstSpan, type: BIGINT },
    rollup_last: { value: read.lastSpan, type: BIGINT },
  };
  if (units) {
    params.shift = { value: UNIT_SHIFT, type: BIGINT };
    params.unit = { value: units.seconds, type: BIGINT };
  }
  const keyOf = (ts: string) =>
    units ? `((${ts} + $shift) // $unit)` : bucketKeySql(plan, ts, params);
  return { params, keyOf };
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
 * A window's value per bucket as `(k, v0, …)` rows, or `(k, v0, c0, …)` beside Count, one
 * population per condition (`populations` over the events, `rollupPopulations` the same over
 * the rollups' keys, and `where`, `rollupWhere` what every row must meet); `additive` (Count,
 * Sum) or not, which adds the whole window's row, as the raw statement does.
 */
export function rollupPopulationsStatement(
  w: RollupWindow,
  units: CalendarUnits | undefined,
  conditions: {
    where: string;
    populations: readonly string[];
    rollupWhere: string;
    rollupPopulations: readonly string[];
  },
): Statement {
  const { params, keyOf } = keyed(w, units);
  const counted = w.aggregation === 'Count';
  const { rollup } = w;
  const spanColumns = conditions.rollupPopulations.map((c, i) => {
    const count = `coalesce(sum(n)${c === 'TRUE' ? '' : ` FILTER (WHERE ${c})`}, 0) AS c${i}`;
    return counted ? count : `${count}, ${rollupPartsSql(rollup.sum as string, c)} AS s${i}`;
  });
  const parts = [
    `SELECT ${keyOf('(span * $rollup_span)')} AS k, ${spanColumns.join(', ')} FROM ${rollup.table}
     WHERE ${SPANS} AND ${conditions.rollupWhere} GROUP BY k`,
  ];
  const edgeColumns = conditions.populations.map((c, i) => {
    const count = `count(*)${c === 'TRUE' ? '' : ` FILTER (WHERE ${c})`} AS c${i}`;
    return counted ? count : `${count}, ${sumPartsSql(w.m as string, c)} AS s${i}`;
  });
  for (const range of edges(w, params)) {
    parts.push(
      `SELECT ${keyOf('"timestamp"')} AS k, ${edgeColumns.join(', ')} FROM ${w.bound.relation}
       WHERE ${range} AND ${conditions.where} GROUP BY k`,
    );
  }
  const columns = conditions.populations.map((_, i) =>
    counted
      ? `sum(c${i})::BIGINT AS v${i}`
      : `${addedPartsSql(`s${i}`)} AS v${i}, sum(c${i})::BIGINT AS c${i}`,
  );
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
  const { params, keyOf } = keyed(w, undefined);
  const counted = w.aggregation === 'Count';
  const { rollup } = w;
  const sp = rollup.split as string;
  const parts = [
    `SELECT ${sp} AS sp, ${keyOf('(span * $rollup_span)')} AS k, sum(n) AS c${
      counted ? '' : `, ${rollupPartsSql(rollup.sum as string, 'TRUE')} AS s`
    } FROM ${rollup.table}
     WHERE ${SPANS} AND ${sp} IS NOT NULL AND ${filters.rollup} GROUP BY sp, k`,
  ];
  for (const range of edges(w, params)) {
    parts.push(
      `SELECT ${splitSql} AS sp, ${keyOf('"timestamp"')} AS k, count(*) AS c${
        counted ? '' : `, ${sumPartsSql(w.m as string)} AS s`
      } FROM ${w.bound.relation}
       WHERE ${range} AND ${filters.events} AND (${splitSql}) IS NOT NULL GROUP BY sp, k`,
    );
  }
  params.cells = { value: cells, type: BIGINT };
  return {
    sql: `SELECT sp, k, sum(c)::BIGINT${counted ? '' : `, ${addedPartsSql('s')}`}
     FROM (${parts.join(' UNION ALL ')}) GROUP BY sp, k LIMIT $cells`,
    params,
  };
}
