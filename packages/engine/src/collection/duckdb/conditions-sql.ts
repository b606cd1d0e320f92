import { BIGINT } from '../../storage/duckdb/duckdb-api.ts';
import type { NamedParams } from '../../storage/duckdb/sql-params.ts';

/**
 * `timestamp` within whole seconds `lo`…`hi` (both ends included), with the ends as the
 * parameters `$lo` and `$hi` of `params`.
 */
export function windowSql(lo: number, hi: number, params: NamedParams): string {
  params.lo = { value: lo, type: BIGINT };
  params.hi = { value: hi, type: BIGINT };
  return `"timestamp" BETWEEN $lo AND $hi`;
}

/** `a AND b`, leaving out conditions that are plainly TRUE. */
export function and(...conditions: string[]): string {
  const kept = conditions.filter((c) => c !== 'TRUE' && c !== '(TRUE)');
  return kept.length ? kept.join(' AND ') : 'TRUE';
}
