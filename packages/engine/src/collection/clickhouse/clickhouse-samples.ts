import { LIMITS, type TimeWindow } from '@analytics-chart/protocol';
import { ClickHouseParams } from '../../storage/clickhouse/clickhouse-params.ts';
import type { ClickHouseRun } from '../../storage/clickhouse/clickhouse-run.ts';
import type { ClickHouseBoundQuery } from '../bind/clickhouse/bind-clickhouse-query.ts';
import type { CollectionAnswer } from '../plan/collection-plan.ts';
import { windowSeconds } from '../plan/time-buckets.ts';
import {
  cutSamplesPage,
  MAX_SAMPLES_SECOND,
  type StoredSample,
  samplesAnswer,
} from '../shape/samples-shape.ts';
import { inWindow, rowsOf, source } from './clickhouse-events.ts';

/**
 * Samples as the DuckDB driver answers them: newest first (or oldest with `Ascending`), 50 at
 * most, in ingest order within a second, and a page never ends inside a second.
 */
export async function clickHouseSamples(
  bound: ClickHouseBoundQuery,
  window: TimeWindow,
  run: ClickHouseRun,
): Promise<CollectionAnswer> {
  const { lo, hi } = windowSeconds(window);
  if (lo > hi) return samplesAnswer([]);
  const ascending = bound.query.order === 'Ascending';
  const direction = ascending ? 'ASC' : 'DESC';
  const page = (from: number, to: number, limit: number) => {
    const params = new ClickHouseParams();
    const n = params.add('UInt32', limit);
    // The page's last second first, from the sort key alone (ClickHouse reads `timestamp` in
    // order and stops; ordering by `seq` too would read and sort the whole window), then the
    // rows up to it in full order.
    const edge = `(SELECT ${ascending ? 'max' : 'min'}(timestamp) FROM (
         SELECT timestamp FROM ${source(run)} WHERE ${inWindow(bound, from, to, params)}
         ORDER BY timestamp ${direction} LIMIT ${n}))`;
    const [lo, hi] = ascending ? ['timestamp', edge] : [edge, 'timestamp'];
    return rowsOf<StoredSample>(
      run,
      `SELECT timestamp, json FROM ${source(run)}
       WHERE ${inWindow(bound, from, to, params)} AND ${lo} <= ${hi}
       ORDER BY timestamp ${direction}, seq ${direction} LIMIT ${n}`,
      params,
    );
  };
  const cut = cutSamplesPage(await page(lo, hi, LIMITS.samples + 1));
  if ('rows' in cut) return samplesAnswer(cut.rows);
  return samplesAnswer(await page(cut.wholeSecond, cut.wholeSecond, MAX_SAMPLES_SECOND));
}
