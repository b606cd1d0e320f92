import { Temporal } from 'temporal-polyfill';
import type { TimeWindow } from './parse-query.ts';
import type { ResolvedGranularity } from './vocabulary.ts';

/**
 * Whether an instant is the first second of a bucket of `granularity` on the wall calendar of
 * `timeZone` (a minute, an hour, midnight, Monday midnight, the 1st at midnight; for minutes and
 * hours also the instant an offset change moves the clock to another unit or back).
 */
export function isBucketStart(
  seconds: number,
  granularity: ResolvedGranularity,
  timeZone: string,
): boolean {
  if (!Number.isInteger(seconds)) return false;
  const t = Temporal.Instant.fromEpochMilliseconds(seconds * 1000).toZonedDateTimeISO(timeZone);
  if (granularity === 'Minute' || granularity === 'Hour') {
    // A minute or hour bucket is one pass of the clock through it: one also starts where an
    // offset change lands the clock in another unit, or sets it back.
    const before = t.subtract({ seconds: 1 });
    if (before.offsetNanoseconds !== t.offsetNanoseconds) {
      const unit = (z: Temporal.ZonedDateTime) =>
        granularity === 'Minute'
          ? z.toPlainDateTime().round({ smallestUnit: 'minute', roundingMode: 'floor' })
          : z.toPlainDateTime().round({ smallestUnit: 'hour', roundingMode: 'floor' });
      const setBack =
        Temporal.PlainDateTime.compare(t.toPlainDateTime(), before.toPlainDateTime()) <= 0;
      if (setBack || !unit(t).equals(unit(before))) return true;
    }
  }
  if (t.second !== 0) return false;
  if (granularity === 'Minute') return true;
  if (t.minute !== 0) return false;
  if (granularity === 'Hour') return true;
  // Midnight, or the first instant of a day whose midnight DST skips.
  if (!t.startOfDay().equals(t)) return false;
  if (granularity === 'Day') return true;
  return granularity === 'Week' ? t.dayOfWeek === 1 : t.day === 1;
}

/**
 * Which end buckets of a time series cover only part of their period because the window starts
 * or ends inside them ("today so far"). Windows are exclusive at both ends, so a window that
 * ends exactly on a bucket start leaves its last bucket whole.
 */
export function incompleteBuckets(
  window: TimeWindow,
  granularity: ResolvedGranularity,
  timeZone: string,
): { first: boolean; last: boolean } {
  return {
    // The first bucket is whole when the window starts at its start or one second before it
    // (exclusive start: events strictly after `start`).
    first:
      !isBucketStart(window.start, granularity, timeZone) &&
      !isBucketStart(window.start + 1, granularity, timeZone),
    last: !isBucketStart(window.end, granularity, timeZone),
  };
}
