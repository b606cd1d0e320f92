import type { ResolvedGranularity, TimeWindow } from '@analytics-chart/protocol';
import { Temporal } from 'temporal-polyfill';
import { EngineError } from '../engine-error.ts';
import type { SqlParams } from '../storage/sql-params.ts';
import { civilFromDays, dayLabel, minuteLabel, monthLabel } from './civil-date.ts';

/**
 * Time buckets in a zone's calendar without asking DuckDB about zones. The zone's UTC offsets
 * inside the window come from Temporal (a handful of transitions at most); SQL then buckets
 * with integer arithmetic on epoch seconds, choosing the offset with a CASE over those
 * transitions, and labels are generated here from the integer keys. This is an order of
 * magnitude faster than `timezone()` and exact across DST changes:
 *
 * - Day, Week (Monday start) and Month follow the wall calendar, so a 23- or 25-hour day is one
 *   bucket.
 * - Minute and Hour buckets are real elapsed minutes and hours aligned to the wall clock: on a
 *   fall-back day the repeated hour is two buckets with the same label, and the skipped hour of
 *   a spring-forward day has no bucket.
 */

/** An offset in seconds that holds from `from` (inclusive) until the next segment. */
export interface OffsetSegment {
  from: number;
  offset: number;
}

/** One bucket of a window, in time order. `key` is what the SQL key expression yields. */
export interface Bucket {
  key: number;
  label: string;
}

/** How a window is cut into buckets: the SQL key expression and every bucket it can yield. */
export interface BucketPlan {
  granularity: ResolvedGranularity;
  /** Every bucket that a second of the window can fall in, oldest first. */
  buckets: Bucket[];
  /** An integer SQL expression of `ts` (a BIGINT Unix-seconds expression) giving its bucket key. */
  keySql(ts: string, params: SqlParams): string;
}

/** More buckets than this is a mistake (Minute over months); the request is refused. */
export const MAX_BUCKETS = 20_000;

const DAY = 86_400;
const WEEK = 7 * DAY;
// Keeps key expressions non-negative near 1970 (DuckDB's // truncates toward zero); a whole
// number of weeks, so that week boundaries stay on Mondays.
const BIAS_DAYS = 700;

/**
 * A zone's offsets over one UTC calendar year: the offset in effect at the year's first second,
 * then each change within the year.
 */
type YearOffsets = OffsetSegment[];

/** Years of zone offsets kept; beyond this the cache starts over (a few KB per hundred). */
const KEPT_YEARS = 4096;
const yearCache = new Map<string, YearOffsets>();

/** The first Unix second of a UTC year. */
const yearStart = (year: number) => Date.UTC(year, 0, 1) / 1000;

function yearOffsets(timeZone: string, year: number): YearOffsets {
  const key = `${year} ${timeZone}`;
  let segments = yearCache.get(key);
  if (segments) return segments;
  const from = yearStart(year);
  const until = yearStart(year + 1);
  let zoned = Temporal.Instant.fromEpochMilliseconds(from * 1000).toZonedDateTimeISO(timeZone);
  segments = [{ from, offset: zoned.offsetNanoseconds / 1e9 }];
  for (;;) {
    const next = zoned.getTimeZoneTransition('next');
    if (!next || next.epochMilliseconds / 1000 >= until) break;
    segments.push({ from: next.epochMilliseconds / 1000, offset: next.offsetNanoseconds / 1e9 });
    zoned = next;
  }
  if (yearCache.size >= KEPT_YEARS) yearCache.clear();
  yearCache.set(key, segments);
  return segments;
}

/**
 * The UTC offsets of `timeZone` over the Unix seconds `lo`…`hi` (inclusive): the offset at `lo`,
 * then each change up to `hi`. Temporal finds a zone's transitions a year at a time, and each
 * year is kept: asking Temporal anew would cost every time-series query that time on the main
 * thread, which serves every request. The rules come with the runtime's time-zone data, which does not change while the process runs.
 */
export function offsetSegments(timeZone: string, lo: number, hi: number): OffsetSegment[] {
  const first = new Date(lo * 1000).getUTCFullYear();
  const last = new Date(hi * 1000).getUTCFullYear();
  const segments: OffsetSegment[] = [];
  for (let year = first; year <= last; year++) {
    for (const segment of yearOffsets(timeZone, year)) {
      if (segment.from > hi) break;
      const previous = segments[segments.length - 1];
      if (segment.from <= lo) segments[0] = { from: lo, offset: segment.offset };
      else if (previous?.offset !== segment.offset) segments.push(segment);
    }
  }
  return segments;
}

function offsetAt(segments: OffsetSegment[], t: number): number {
  let offset = segments[0]?.offset ?? 0;
  for (const segment of segments) {
    if (segment.from <= t) offset = segment.offset;
    else break;
  }
  return offset;
}

/** A SQL expression choosing, per row, the value that holds at `ts` among the segments. */
function piecewiseSql(
  ts: string,
  segments: OffsetSegment[],
  value: (s: OffsetSegment) => number,
  params: SqlParams,
): string {
  const first = segments[0];
  if (!first) return '0';
  const values = segments.map(value);
  if (values.every((v) => v === values[0])) return params.integer(values[0] ?? 0);
  const branches = segments
    .slice(1)
    .map((s, i) => `WHEN ${ts} < ${params.integer(s.from)} THEN ${params.integer(values[i] ?? 0)}`);
  return `(CASE ${branches.join(' ')} ELSE ${params.integer(values[values.length - 1] ?? 0)} END)`;
}

const mod = (a: number, b: number) => ((a % b) + b) % b;

/**
 * Plans the buckets of the integer seconds `lo`…`hi` (inclusive) in `timeZone`. Throws a 400
 * when the window would have more than {@link MAX_BUCKETS} buckets.
 */
export function planBuckets(
  granularity: ResolvedGranularity,
  timeZone: string,
  lo: number,
  hi: number,
): BucketPlan {
  const segments = offsetSegments(timeZone, lo, hi);
  const local = (t: number) => t + offsetAt(segments, t);
  const check = (count: number) => {
    if (count > MAX_BUCKETS) {
      throw new EngineError(
        400,
        `granularity: ${granularity} would give ${count} buckets (at most ${MAX_BUCKETS}); choose a coarser granularity or a shorter window`,
      );
    }
  };
  const range = (first: number, last: number, label: (key: number) => string): Bucket[] => {
    if (last < first) return [];
    check(last - first + 1);
    const out: Bucket[] = [];
    for (let key = first; key <= last; key++) out.push({ key, label: label(key) });
    return out;
  };

  if (granularity === 'Minute' || granularity === 'Hour') {
    const width = granularity === 'Minute' ? 60 : 3600;
    // Wall-clock alignment only depends on the offset modulo the width (zero for whole-hour
    // offsets), so real elapsed buckets are (ts + r) // width.
    const r = (s: OffsetSegment) => mod(s.offset, width);
    const keyOf = (t: number) =>
      Math.floor((t + r({ from: t, offset: offsetAt(segments, t) })) / width);
    const buckets = range(keyOf(lo), keyOf(hi), (key) => {
      const start = key * width - mod(offsetAt(segments, key * width), width);
      return minuteLabel(local(start));
    });
    // Whole-hour offsets (nearly every zone) need no shift at all.
    const aligned = segments.every((segment) => r(segment) === 0);
    return {
      granularity,
      buckets,
      keySql: (ts, params) =>
        aligned
          ? `(${ts} // ${params.integer(width)})`
          : `((${ts} + ${piecewiseSql(ts, segments, r, params)}) // ${params.integer(width)})`,
    };
  }

  // Only windows within a day of 1970 can have negative wall-clock seconds.
  const biasDays = lo + Math.min(...segments.map((s) => s.offset)) < DAY ? BIAS_DAYS : 0;
  const unbias = biasDays ? ` - ${biasDays}` : '';
  const localSql = (ts: string, params: SqlParams) =>
    `(${ts} + ${piecewiseSql(ts, segments, (s) => s.offset + biasDays * DAY, params)})`;
  const localDay = (t: number) => Math.floor(local(t) / DAY);

  if (granularity === 'Day') {
    return {
      granularity,
      buckets: range(localDay(lo), localDay(hi), dayLabel),
      keySql: (ts, params) => `(${localSql(ts, params)} // ${params.integer(DAY)}${unbias})`,
    };
  }
  if (granularity === 'Week') {
    // 1970-01-01 was a Thursday: day d belongs to the week starting on day 7 * ((d + 3) // 7) - 3.
    const weekOf = (day: number) => Math.floor((day + 3) / 7);
    return {
      granularity,
      buckets: range(weekOf(localDay(lo)), weekOf(localDay(hi)), (week) => dayLabel(week * 7 - 3)),
      keySql: (ts, params) =>
        `((${localSql(ts, params)} + ${params.integer(3 * DAY)}) // ${params.integer(WEEK)}${biasDays ? ` - ${biasDays / 7}` : ''})`,
    };
  }
  // Month: the wall date from the local day number, then year * 12 + month - 1.
  const monthOf = (day: number) => {
    const { year, month } = civilFromDays(day);
    return year * 12 + month - 1;
  };
  return {
    granularity,
    buckets: range(monthOf(localDay(lo)), monthOf(localDay(hi)), monthLabel),
    keySql: (ts, params) => {
      const date = `(DATE '1970-01-01' + CAST(${localSql(ts, params)} // ${params.integer(DAY)}${unbias} AS INTEGER))`;
      return `(year(${date}) * 12 + month(${date}) - 1)`;
    },
  };
}

/**
 * The integer seconds a window's events can have: `start < ts < end` with whole-second
 * timestamps. Empty (`lo > hi`) when no whole second fits.
 */
export function windowSeconds(window: TimeWindow): { lo: number; hi: number } {
  return { lo: Math.floor(window.start) + 1, hi: Math.ceil(window.end) - 1 };
}
