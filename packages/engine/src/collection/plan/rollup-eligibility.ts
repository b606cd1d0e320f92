import type { Aggregation } from '@analytics-chart/protocol';
import type { BucketPlan, OffsetSegment } from './time-buckets.ts';

/** The spans a query reads from rollups, and the seconds at the window's edges it reads raw. */
export interface RollupRead {
  /** First and last span (`floor(ts / spanSeconds)`) read from rollups; every second of each is in the window. */
  firstSpan: number;
  lastSpan: number;
  /** The window's seconds before `firstSpan` and after `lastSpan`, read from events: [lo, hi] pairs. */
  rawEdges: Array<[number, number]>;
}

/**
 * Whole spans a window must cover for rollups to be read (four weeks of 15-minute spans), unless
 * the collection's events are dense enough ({@link MIN_ROLLUP_EVENTS}): reading them has a fixed
 * cost (the rollup rows, and up to two ranges of events at the window's edges, each a scan of
 * the timestamps where rows are clustered by another key) that only a window holding enough
 * events repays; shorter windows read their events.
 */
export const MIN_ROLLUP_SPANS = 2688;

/**
 * Events a window's whole spans must hold, by the collection's events per span, for rollups to
 * be read in fewer than {@link MIN_ROLLUP_SPANS} spans: about where reading this many events
 * costs as much as the rollup rows and the edges, so that a dense collection's short windows
 * read rollups and a sparse one's read their events.
 */
export const MIN_ROLLUP_EVENTS = 200_000;

/**
 * What reading one rollup row costs, in events read: a row is wider than the columns of an
 * event a query reads (a count, and per metric its sum's parts), and a read adds up every row of
 * its spans (one per combination of the keys' values), so a collection whose rollups hold one
 * row per this many events or more reads its events instead, however long the window.
 */
export const ROLLUP_ROW_COST = 3;

/**
 * Events a window's whole spans must hold on ClickHouse, by aggregation, for rollups to be read
 * where queries weigh them, at any window length: ClickHouse plans each part of a statement anew,
 * and a rollup read is several parts (the rollup rows, the edges' events, Sum's exact parts in
 * each), a fixed cost that only a window of many events repays, Sum's and Avg's far later than
 * Count's.
 */
export const CLICKHOUSE_MIN_ROLLUP_EVENTS: Readonly<Record<'Count' | 'Sum' | 'Avg', number>> = {
  Count: 300_000,
  Sum: 15_000_000,
  Avg: 15_000_000,
};

/**
 * The whole spans a window must cover for rollups to be read, given the collection's events per
 * span with events and its rollup rows per event (each undefined where unknown): none will do
 * where the rows cost as much as the events they stand for ({@link ROLLUP_ROW_COST}); else
 * enough spans to hold `minEvents` (default {@link MIN_ROLLUP_EVENTS}), at most `maxSpans`
 * (default {@link MIN_ROLLUP_SPANS}, which is also the answer where the events per span are
 * unknown).
 */
export function minRollupSpans(
  eventsPerSpan: number | undefined,
  rowsPerEvent?: number | undefined,
  minEvents = MIN_ROLLUP_EVENTS,
  maxSpans = MIN_ROLLUP_SPANS,
): number {
  if (rowsPerEvent !== undefined && rowsPerEvent * ROLLUP_ROW_COST >= 1) {
    return Number.POSITIVE_INFINITY;
  }
  if (eventsPerSpan === undefined || !(eventsPerSpan > 0)) return MIN_ROLLUP_SPANS;
  return Math.min(maxSpans, Math.max(1, Math.ceil(minEvents / eventsPerSpan)));
}

/** What a window's statement asks for, as far as rollups can answer it. */
export interface RollupRequest {
  aggregation: Aggregation;
  /**
   * Whether the rollups hold the keys the statement reads of its events besides their time:
   * every key its conditions and split read (rolled-up keys, compared by `=`, `≠`, `<` or `>`).
   */
  readable: boolean;
  /** Whether the rollups keep the sums of the statement's metric (what Sum and Avg read). */
  metricKept: boolean;
  /**
   * The window's buckets, or null where the answer is one value over the whole window (Single
   * Value, Table, Bar Chart, Pie Chart): one bucket, which every span in the window lies in.
   */
  plan: BucketPlan | null;
  /** The window's first and last second. */
  lo: number;
  hi: number;
  /** Seconds in one span of the rollups the workspace keeps. */
  spanSeconds: number;
  /**
   * The collection's events per span that has any, as its rollups counted them lately (a cost
   * estimate, never a correctness matter); undefined where unknown.
   */
  eventsPerSpan?: number;
  /**
   * The collection's rollup rows per event, as the rollups counted them lately (a read adds up
   * every row of its spans, whichever keys it reads: the rows are kept by all of them); a cost
   * estimate like {@link eventsPerSpan}, undefined where unknown or not weighed.
   */
  rowsPerEvent?: number;
  /**
   * Events the whole spans must hold, and the most spans that may be asked for (the driver's
   * weighing, {@link minRollupSpans}'s defaults where not given).
   */
  minEvents?: number;
  maxSpans?: number;
}

/**
 * Whether rollups give the same answer as the events, and which spans to read: only a Count,
 * Sum or Avg that reads nothing of the events the rollups do not hold (they keep counts, and
 * sums' exact parts, per span and string form of each rolled-up key), over buckets that are each a union
 * of whole spans, because then every span lies in one bucket and adding span counts up is
 * adding the events up. That holds where the answer is one bucket (the whole window), and
 * where the bucket width (Minute and Hour) and every offset of the zone in the window and every
 * instant it changes are multiples of 15 minutes; older odd offsets (before 1972 in most
 * zones) read raw. Windows before 1970-01-02 read raw as well,
 * because SQL's truncating division keys negative seconds differently, and windows of fewer
 * whole spans than {@link minRollupSpans}, which their events answer sooner (never, where the
 * rollups hold too many rows per event). Undefined: read raw.
 */
export function rollupRead(request: RollupRequest): RollupRead | undefined {
  const { aggregation, readable, metricKept, plan, lo, hi, spanSeconds: span } = request;
  if (!['Count', 'Sum', 'Avg'].includes(aggregation) || !readable) return undefined;
  if (aggregation !== 'Count' && !metricKept) return undefined;
  if (lo > hi || lo < 86_400) return undefined;
  // One bucket (no plan): every whole span lies in it, whatever the zone's offsets.
  let segments: readonly OffsetSegment[] = [];
  if (plan?.clock) {
    if (plan.clock.width % span !== 0) return undefined;
    segments = plan.clock.segments;
  } else if (plan?.calendar) {
    segments = plan.calendar.segments;
  } else if (plan) return undefined;
  const aligned = segments.every(
    (s, i) => s.offset % span === 0 && (i === 0 || s.from % span === 0),
  );
  if (!aligned) return undefined;
  const firstSpan = Math.ceil(lo / span);
  const lastSpan = Math.floor((hi + 1) / span) - 1;
  const spans = minRollupSpans(
    request.eventsPerSpan,
    request.rowsPerEvent,
    request.minEvents,
    request.maxSpans,
  );
  if (lastSpan - firstSpan + 1 < spans) return undefined;
  const rawEdges: Array<[number, number]> = [];
  if (lo < firstSpan * span) rawEdges.push([lo, firstSpan * span - 1]);
  if ((lastSpan + 1) * span <= hi) rawEdges.push([(lastSpan + 1) * span, hi]);
  return { firstSpan, lastSpan, rawEdges };
}
