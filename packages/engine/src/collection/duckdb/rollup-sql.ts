import type { SqlParams } from '../../storage/duckdb/sql-params.ts';
import type { DuckDbBoundQuery } from '../bind/duckdb/bind-duckdb-query.ts';
import type { RollupRead } from '../plan/rollup-eligibility.ts';
import type { BucketPlan } from '../plan/time-buckets.ts';
import { bucketKeySql } from './bucket-key-sql.ts';

/**
 * A window's Count per bucket as `(k, v0, …)` rows (one column per population), one per bucket, from the rollups of the
 * collection (`rollup`, as bind found them) for its whole spans and from the events of `relation` for the
 * seconds at its edges (`plan/rollup-eligibility.ts` says when that is the events' answer).
 * Each span is keyed by its first second, which shares its bucket with the rest of it.
 */
export function rollupCountSql(
  plan: BucketPlan,
  read: RollupRead,
  rollup: NonNullable<DuckDbBoundQuery['rollup']>,
  relation: string,
  params: SqlParams,
  populations = 1,
): string {
  const spanKey = bucketKeySql(plan, `(span * ${params.integer(rollup.spanSeconds)})`, params);
  const parts = [
    `SELECT ${spanKey} AS k, n AS v FROM ${rollup.table}
     WHERE collection_id = ${params.integer(rollup.collectionId)}
       AND span BETWEEN ${params.integer(read.firstSpan)} AND ${params.integer(read.lastSpan)}`,
  ];
  // One statement per edge: a single narrow range lets DuckDB skip row groups by their min and max.
  for (const [lo, hi] of read.rawEdges) {
    const key = bucketKeySql(plan, '"timestamp"', params);
    parts.push(
      `SELECT ${key} AS k, count(*) AS v FROM ${relation}
       WHERE "timestamp" BETWEEN ${params.integer(lo)} AND ${params.integer(hi)} GROUP BY k`,
    );
  }
  // Populations without a condition of their own (Compare Line's empty compare filters) share it.
  const columns = Array.from({ length: populations }, (_, i) => `sum(v)::BIGINT AS v${i}`);
  return `SELECT k, ${columns.join(', ')} FROM (${parts.join(' UNION ALL ')}) GROUP BY k`;
}
