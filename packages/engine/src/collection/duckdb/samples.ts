import { LIMITS } from '@analytics-chart/protocol';
import { BIGINT } from '../../storage/duckdb/duckdb-api.ts';
import type { CollectionAnswer } from '../plan/collection-plan.ts';
import {
  samplesAnswer as answerOf,
  type StoredSample,
  wholeSecondsPage,
} from '../plan/samples-page.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import { and, type QueryContext, toNumber } from './collection-relation.ts';

/** Ranges tried from the newest (or oldest) end of the window, in seconds; the last is all. */
const NARROWING_SPANS = [3600, 86_400, 30 * 86_400, Number.POSITIVE_INFINITY];

/**
 * Samples: events exactly as ingested, at most 50 per call, filters applied. `Ascending` is
 * oldest first and, within a second, in ingest order (see `ingestOrder`);
 * `Descending` is its exact reverse, so that the two orders page through the same sequence. A
 * page never ends in the middle of a second (see {@link wholeSecondsPage}).
 */
export async function samplesAnswer(ctx: QueryContext): Promise<CollectionAnswer> {
  const { lo, hi } = windowSeconds(ctx.windows.window);
  if (lo > hi || !ctx.bound.collected) return answerOf([]);
  const ascending = ctx.query.order === 'Ascending';
  const direction = ascending ? 'ASC' : 'DESC';
  const page = async (from: number, to: number, limit: number): Promise<StoredSample[]> => {
    const rows = await ctx.run({
      sql: `SELECT "timestamp", "json" FROM ${ctx.bound.relation}
       WHERE ${and(`"timestamp" BETWEEN $from AND $to`, ctx.bound.where.filters)}
       ORDER BY "timestamp" ${direction}, ${ctx.bound.ingestOrder} ${direction} LIMIT $limit`,
      params: {
        ...ctx.bound.params,
        from: { value: from, type: BIGINT },
        to: { value: to, type: BIGINT },
        limit: { value: limit, type: BIGINT },
      },
    });
    return rows.map(([timestamp, json]) => ({
      timestamp: toNumber(timestamp ?? null) ?? 0,
      json: String(json),
    }));
  };
  // Events are stored roughly in time order (within each value's run where the rows were
  // clustered), so a narrow range at the right end of the window lets DuckDB skip most other
  // row groups by their min/max; widen only when it holds too few.
  let rows: StoredSample[] = [];
  for (const span of NARROWING_SPANS) {
    const from = ascending ? lo : Math.max(lo, hi - span);
    const to = ascending ? Math.min(hi, lo + span) : hi;
    rows = await page(from, to, LIMITS.samples + 1);
    if (rows.length > LIMITS.samples || (from === lo && to === hi)) break;
  }
  return answerOf(await wholeSecondsPage(rows, (second, limit) => page(second, second, limit)));
}
