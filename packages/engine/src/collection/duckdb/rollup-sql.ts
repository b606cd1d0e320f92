import { BIGINT } from '../../storage/duckdb/duckdb-api.ts';
import type { NamedParams, Statement } from '../../storage/duckdb/sql-params.ts';
import type { DuckDbBoundQuery } from '../bind/duckdb/bind-duckdb-query.ts';
import { type CalendarUnits, UNIT_SHIFT } from '../plan/calendar-units.ts';
import type { RollupRead } from '../plan/rollup-eligibility.ts';
import type { BucketPlan } from '../plan/time-buckets.ts';
import { bucketKeySql } from './line-sql.ts';

/**
 * A window's Count per bucket as `(k, v0, …)` rows (one column per population), from the
 * rollups of the collection (`rollup`, as bind found them) for its whole spans and from the
 * events of `relation` for the seconds at its edges (`plan/rollup-eligibility.ts` says when
 * that is the events' answer). Rows are keyed as the raw statement keys them, by the window's
 * `units` where it has them, else by bucket; a span by its first second, which shares its unit
 * and bucket with the rest of it (a unit's length is a multiple of the span's where rollups are
 * read). Pure, like the rest of the render stage.
 */
export function rollupCountStatement(
  plan: BucketPlan,
  read: RollupRead,
  rollup: NonNullable<DuckDbBoundQuery['rollup']>,
  relation: string,
  populations: number,
  units: CalendarUnits | undefined,
): Statement {
  const params: NamedParams = {
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
  const spanKey = keyOf('(span * $rollup_span)');
  const parts = [
    `SELECT ${spanKey} AS k, n AS v FROM ${rollup.table}
     WHERE collection_id = $rollup_id AND span BETWEEN $rollup_first AND $rollup_last`,
  ];
  // One part per edge: a single narrow range lets DuckDB skip row groups by their min and max.
  read.rawEdges.forEach(([lo, hi], i) => {
    params[`edge${i}_lo`] = { value: lo, type: BIGINT };
    params[`edge${i}_hi`] = { value: hi, type: BIGINT };
    const key = keyOf('"timestamp"');
    parts.push(
      `SELECT ${key} AS k, count(*) AS v FROM ${relation}
       WHERE "timestamp" BETWEEN $edge${i}_lo AND $edge${i}_hi GROUP BY k`,
    );
  });
  // Populations without a condition of their own (Compare Line's empty compare filters) share it.
  const columns = Array.from({ length: populations }, (_, i) => `sum(v)::BIGINT AS v${i}`);
  return {
    sql: `SELECT k, ${columns.join(', ')} FROM (${parts.join(' UNION ALL ')}) GROUP BY k`,
    params,
  };
}
