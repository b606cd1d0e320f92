import type { ResolvedGranularity, TimeWindow } from '@analytics-chart/protocol';
import { Temporal } from 'temporal-polyfill';
import { EngineError } from '../../engine-error.ts';
import { civilFromDays, dayLabel, minuteLabel, monthLabel } from './civil-date.ts';

/**
 * Time buckets in a zone's calendar, planned once for every storage driver. The zone's UTC
 * offsets inside the window come from Temporal (a handful of transitions at most); a driver then
 * buckets with integer arithmetic on epoch seconds, choosing the offset among those transitions
 * (`collection/duckdb/line-sql.ts`), which is cheaper than a time-zone function per row and
 * exact across DST changes; labels are generated here from the integer keys:
 *
 * - Day, Week (Monday start) and Month follow the wall calendar, so a 23- or 25-hour day is one
 *   bucket, and a date the zone skipped has none.
 * - Minute and Hour buckets are the wall clock's minutes and hours, one bucket per pass of the
 *   clock through each (see {@link clockPlan}).
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

/**
 * How a window is cut into buckets, as data each storage driver compiles to its own SQL: every
 * bucket a second of the window can fall in, and how a second finds its bucket's key.
 */
export interface BucketPlan {
  granularity: ResolvedGranularity;
  /** Every bucket that a second of the window can fall in, oldest first. */
  buckets: Bucket[];
  /**
   * Minute and Hour plans: a second `ts` has the key `floor((ts + offset) / width)`, with the
   * `offset` of the last segment whose `from` is at most `ts` (the first segment's before it).
   */
  clock?: { width: number; segments: readonly OffsetSegment[] };
  /**
   * Day, Week and Month plans: the wall-clock second of `ts` is `ts + offset` (the offset chosen
   * as for `clock`); its day is that `// 86400`, its Monday week `(day + 3) // 7`, its month
   * `year * 12 + month - 1`, each the bucket key. `biasDays` whole days (a whole number of
   * weeks) are added to the offsets and taken off the key, keeping every sum non-negative
   * for SQL that divides by truncation.
   */
  calendar?: { segments: readonly OffsetSegment[]; biasDays: number };
}

/** More buckets than this is a mistake (Minute over months); the request is refused. */
export const MAX_BUCKETS = 20_000;

const DAY = 86_400;
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
 * year is kept, because asking anew would hold up the main thread, which serves every request;
 * the rules come with the runtime's time-zone data, which does not change while it runs.
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

/** One offset segment clipped to the window: the seconds `from`…`to` (inclusive). */
interface Span {
  from: number;
  to: number;
  offset: number;
}

function spansOf(segments: OffsetSegment[], hi: number): Span[] {
  return segments.map((s, i) => ({
    from: s.from,
    to: Math.min(hi, (segments[i + 1]?.from ?? hi + 1) - 1),
    offset: s.offset,
  }));
}

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
  const spans = spansOf(segments, hi);
  const check = (count: number) => {
    if (count > MAX_BUCKETS) {
      throw new EngineError(
        400,
        `granularity: ${granularity} would give ${count} buckets (at most ${MAX_BUCKETS}); choose a coarser granularity or a shorter window`,
      );
    }
  };
  if (lo > hi) return { granularity, buckets: [] };
  if (granularity === 'Minute' || granularity === 'Hour') {
    return clockPlan(granularity, spans, check);
  }
  return calendarPlan(granularity, spans, check);
}

/**
 * Minute and Hour buckets are the wall clock's minutes and hours as the zone's clock reads them:
 * each pass of the clock through a minute (hour) is one bucket. A clock set forward skips the
 * units it jumps over (and stays in its bucket when it stays in the unit); a clock set back
 * shows units again, each a bucket of its own with the same label. Within one offset a unit key is `(ts + offset) // width`; each offset gets a
 * constant that makes keys consecutive across the change, so the SQL is one CASE over the
 * window's offsets, and a single integer where they all agree (whole-hour zones).
 */
function clockPlan(
  granularity: 'Minute' | 'Hour',
  spans: Span[],
  check: (count: number) => void,
): BucketPlan {
  const width = granularity === 'Minute' ? 60 : 3600;
  // Per span: the first and last wall unit, and the shift from wall units to bucket keys.
  const units = spans.map((s) => ({
    first: Math.floor((s.from + s.offset) / width),
    last: Math.floor((s.to + s.offset) / width),
    shift: 0,
  }));
  let count = 0;
  let lastKey = 0;
  units.forEach((u, i) => {
    const before = units[i - 1];
    // A clock set forward within one unit stays in its bucket; a clock set back passes
    // through the unit again, which is a bucket of its own.
    const same =
      before !== undefined &&
      before.last === u.first &&
      (spans[i]?.offset ?? 0) > (spans[i - 1]?.offset ?? 0);
    u.shift = before === undefined ? 0 : lastKey + (same ? 0 : 1) - u.first;
    count += u.last - u.first + (same ? 0 : 1);
    lastKey = u.last + u.shift;
  });
  check(count);
  // Every value added to `ts` stays non-negative, for SQL that divides by truncation.
  const lowest = Math.min(...spans.map((s, i) => s.offset + (units[i]?.shift ?? 0) * width));
  const bias = lowest < 0 ? Math.ceil(-lowest / width) : 0;
  const buckets: Bucket[] = [];
  units.forEach((u) => {
    for (let unit = u.first; unit <= u.last; unit++) {
      const key = unit + u.shift + bias;
      if (buckets[buckets.length - 1]?.key === key) continue;
      buckets.push({ key, label: minuteLabel(unit * width) });
    }
  });
  const values = spans.map((s, i) => s.offset + ((units[i]?.shift ?? 0) + bias) * width);
  const segments = spans.map((s, i) => ({ from: s.from, offset: values[i] ?? 0 }));
  return { granularity, buckets, clock: { width, segments } };
}

/** The bucket key of a wall day (days since 1970-01-01) in a Day, Week or Month plan. */
export function calendarKeyOfDay(granularity: ResolvedGranularity): (day: number) => number {
  // 1970-01-01 was a Thursday: day d belongs to the week starting on day 7 * ((d + 3) // 7) - 3.
  if (granularity === 'Week') return (day) => Math.floor((day + 3) / 7);
  if (granularity === 'Month') {
    return (day) => {
      const { year, month } = civilFromDays(day);
      return year * 12 + month - 1;
    };
  }
  return (day) => day;
}

/**
 * Day, Week (Monday start) and Month buckets are calendar units: one bucket per unit the
 * zone's clock shows during the window, so a date the zone skipped has none.
 */
function calendarPlan(
  granularity: 'Day' | 'Week' | 'Month',
  spans: Span[],
  check: (count: number) => void,
): BucketPlan {
  // Only windows within a day of 1970 can have negative wall-clock seconds.
  const biasDays = Math.min(...spans.map((s) => s.from + s.offset)) < DAY ? BIAS_DAYS : 0;
  const segments = spans.map((s) => ({ from: s.from, offset: s.offset }));
  const unitOf = calendarKeyOfDay(granularity);
  const label =
    granularity === 'Day'
      ? dayLabel
      : granularity === 'Week'
        ? (week: number) => dayLabel(week * 7 - 3)
        : monthLabel;
  // The units each offset's stretch of the window shows, merged (a clock set back can show a
  // unit twice; one set forward can skip one).
  const ranges = spans
    .map((s) => [
      unitOf(Math.floor((s.from + s.offset) / DAY)),
      unitOf(Math.floor((s.to + s.offset) / DAY)),
    ])
    .sort((a, b) => (a[0] as number) - (b[0] as number));
  const merged: number[][] = [];
  for (const [first, last] of ranges as Array<[number, number]>) {
    const open = merged[merged.length - 1];
    if (open && first <= (open[1] as number) + 1) open[1] = Math.max(open[1] as number, last);
    else merged.push([first, last]);
  }
  check(merged.reduce((n, [first, last]) => n + (last as number) - (first as number) + 1, 0));
  const buckets: Bucket[] = [];
  for (const [first, last] of merged as Array<[number, number]>) {
    for (let key = first; key <= last; key++) buckets.push({ key, label: label(key) });
  }
  return { granularity, buckets, calendar: { segments, biasDays } };
}

/**
 * The integer seconds a window's events can have: `start < ts < end` with whole-second
 * timestamps. Empty (`lo > hi`) when no whole second fits.
 */
export function windowSeconds(window: TimeWindow): { lo: number; hi: number } {
  return { lo: Math.floor(window.start) + 1, hi: Math.ceil(window.end) - 1 };
}
