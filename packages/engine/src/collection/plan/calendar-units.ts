import { type BucketPlan, calendarKeyOfDay, type OffsetSegment } from './time-buckets.ts';

const DAY = 86_400;

/** The most units a window is cut into before a driver keys its buckets per event instead. */
export const MAX_UNITS = 4096;

/**
 * Added to a second before dividing it into units, so that every dividend is positive for SQL
 * that divides by truncation (from May 1778 on); a whole number of days, hence of units.
 */
export const UNIT_SHIFT = 70_000 * DAY;

/**
 * Spans of UTC time that each lie within one bucket of a Day, Week or Month plan: unit `n` is
 * the seconds `n * seconds` to `(n + 1) * seconds - 1`.
 */
export interface CalendarUnits {
  /** A unit's length: it divides a day, every offset of the zone in the window and every instant the offset changes. */
  seconds: number;
  /**
   * The bucket key of unit `n`, which its first and last second in the window share; a unit
   * that straddles two buckets throws (an error, never a misfiled event).
   */
  bucketOf(n: number): number;
}

/**
 * Units for an additive aggregate over a Day, Week or Month plan: a driver groups events by
 * `(ts + UNIT_SHIFT) // seconds`, an integer division per event that is cheaper than choosing
 * the zone's offset per event, and adds the units up per bucket. Undefined for Minute and Hour
 * plans, for windows that start before the shift makes every second positive (May 1778),
 * and where the window holds more than {@link MAX_UNITS} units.
 */
export function calendarUnits(plan: BucketPlan, lo: number, hi: number): CalendarUnits | undefined {
  const calendar = plan.calendar;
  // Before the shift, a truncating division would put a second in the unit after its own.
  if (!calendar || lo > hi || lo + UNIT_SHIFT < 0) return undefined;
  const { segments } = calendar;
  let seconds = DAY;
  segments.forEach((segment, i) => {
    seconds = gcd(seconds, Math.abs(segment.offset));
    // The first segment starts at the window's first second, not at a change of offset.
    if (i > 0) seconds = gcd(seconds, Math.abs(segment.from));
  });
  if ((hi - lo) / seconds >= MAX_UNITS) return undefined;
  const keyOf = calendarKey(plan.granularity, segments);
  return {
    seconds,
    bucketOf(n) {
      const start = n * seconds;
      const key = keyOf(Math.max(start, lo));
      if (keyOf(Math.min(start + seconds - 1, hi)) !== key) {
        throw new Error(`time unit ${n} of ${seconds} s spans two buckets`);
      }
      return key;
    },
  };
}

/** The key `BucketPlan.calendar` gives a second: its wall date's day, Monday week or month. */
function calendarKey(
  granularity: BucketPlan['granularity'],
  segments: readonly OffsetSegment[],
): (ts: number) => number {
  const keyOfDay = calendarKeyOfDay(granularity);
  return (ts) => {
    let offset = segments[0]?.offset ?? 0;
    for (const segment of segments) if (ts >= segment.from) offset = segment.offset;
    return keyOfDay(Math.floor((ts + offset) / DAY));
  };
}

function gcd(a: number, b: number): number {
  let [x, y] = [a, b];
  while (y !== 0) [x, y] = [y, x % y];
  return x;
}
