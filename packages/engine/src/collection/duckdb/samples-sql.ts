import { LIMITS } from '@analytics-chart/protocol';
import { BIGINT } from '../../storage/duckdb/duckdb-api.ts';
import type { Statement } from '../../storage/duckdb/sql-params.ts';
import type { DuckDbBoundQuery } from '../bind/duckdb/bind-duckdb-query.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import { and } from './conditions-sql.ts';

/**
 * The render stage of Samples on DuckDB: statements whose rows are `[timestamp, json]`, events
 * exactly as ingested with the filters applied, newest first (or oldest with `Ascending`) and,
 * within a second, in ingest order (see `ingestOrder`), `Descending` being `Ascending`'s exact
 * reverse so that the two orders page through the same sequence. From the bound query alone.
 * Pure: no catalog, no connection.
 */

/** A Samples statement: `events`, rows `[timestamp, json]` in the page's order. */
export interface SamplesStatement extends Statement {
  form: 'events';
}

/** Ranges tried from the newest (or oldest) end of the window, in seconds; the last is all. */
const NARROWING_SPANS = [3600, 86_400, 30 * 86_400, Number.POSITIVE_INFINITY];

/**
 * A page's statements, each reading `LIMITS.samples + 1` events over a wider range from the
 * window's newest (or oldest) end, the last over the whole window: the run stage stops at the
 * first that holds more than a page. None where no event can be read.
 *
 * Events are stored roughly in time order (within each value's run where the rows were
 * clustered), so a narrow range at the right end of the window lets DuckDB skip most other row
 * groups by their min/max; a wider one is read only when it holds too few.
 */
export function samplesSql(bound: DuckDbBoundQuery): SamplesStatement[] {
  const { lo, hi } = windowSeconds(bound.windows.window);
  if (lo > hi || !bound.collected) return [];
  const ascending = bound.query.order === 'Ascending';
  const statements: SamplesStatement[] = [];
  for (const span of NARROWING_SPANS) {
    const from = ascending ? lo : Math.max(lo, hi - span);
    const to = ascending ? Math.min(hi, lo + span) : hi;
    statements.push(samplesRangeSql(bound, from, to, LIMITS.samples + 1));
    if (from === lo && to === hi) break;
  }
  return statements;
}

/** The first `limit` events of seconds `from`…`to` in the page's order. */
export function samplesRangeSql(
  bound: DuckDbBoundQuery,
  from: number,
  to: number,
  limit: number,
): SamplesStatement {
  const direction = bound.query.order === 'Ascending' ? 'ASC' : 'DESC';
  return {
    form: 'events',
    sql: `SELECT "timestamp", "json" FROM ${bound.relation}
       WHERE ${and(`"timestamp" BETWEEN $from AND $to`, bound.where.filters)}
       ORDER BY "timestamp" ${direction}, ${bound.ingestOrder} ${direction} LIMIT $limit`,
    params: {
      ...bound.params,
      from: { value: from, type: BIGINT },
      to: { value: to, type: BIGINT },
      limit: { value: limit, type: BIGINT },
    },
  };
}
