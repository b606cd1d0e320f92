import { Temporal } from 'temporal-polyfill';

/**
 * Time values as clients send them (`start`, `end`, `compare`), parsed once into a small syntax
 * tree and resolved against a zone and a "now" when the query runs. Calendar arithmetic and zone
 * rules come from Temporal; nothing here computes offsets by hand.
 */

/** A start or end as it appears in a request body. */
export type TimeValue = string | number;

/** Units of relative times and compare offsets. */
export type TimeUnit = 'minute' | 'hour' | 'day' | 'week' | 'month' | 'year';

/** A wall-clock reading with no zone yet (ISO without offset, US format, bare date). */
export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

/** What a time value means, before a zone and a "now" turn it into an instant. */
export type TimeSpec =
  | { kind: 'now' }
  | { kind: 'ago'; amount: number; unit: TimeUnit }
  | { kind: 'unix'; seconds: number }
  | { kind: 'instant'; epochMilliseconds: number }
  | { kind: 'wall'; wall: WallTime };

/** A shift such as `1 week ago` or `7 days`, used by `compare`. */
export interface TimeOffset {
  amount: number;
  unit: TimeUnit;
}

/** Instants outside 1970-01-01 … 9999-12-31 are refused: they are typing slips, not queries. */
export const MAX_UNIX_SECONDS = 253_402_300_799;
/** Relative amounts beyond this reach before 1970 anyway; refusing them keeps arithmetic exact. */
const MAX_RELATIVE_AMOUNT = 1_000_000;

const UNIT_WORDS: Record<string, TimeUnit> = {
  minute: 'minute',
  min: 'minute',
  mins: 'minute',
  hour: 'hour',
  hr: 'hour',
  hrs: 'hour',
  day: 'day',
  week: 'week',
  month: 'month',
  year: 'year',
};

const RELATIVE = /^(\d{1,7})\s+([a-z]+?)(s?)(\s+ago)?$/i;
const DIGITS = /^\d{1,12}$/;
const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;
const US =
  /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?:[\s,T]+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(?:([ap])\.?\s*m\.?)?)?$/i;

function unitOf(word: string): TimeUnit | undefined {
  return UNIT_WORDS[word.toLowerCase()];
}

function checkedWall(wall: WallTime): WallTime | null {
  try {
    // overflow 'reject' refuses 02/30, 24:00, 13th months and the like.
    Temporal.PlainDateTime.from(wall, { overflow: 'reject' });
    return wall;
  } catch {
    return null;
  }
}

/** 12-hour readings as real clients send them: `1:05 pm`, `12:00 am`, also `0:00 am` and `23:59 pm`. */
function hourOf(hour: number, meridiem: string | undefined): number | null {
  if (meridiem === undefined) return hour;
  if (hour >= 13) return hour <= 23 ? hour : null; // already a 24-hour reading: the suffix is noise
  const pm = meridiem.toLowerCase() === 'p';
  if (hour === 12) return pm ? 12 : 0;
  return pm ? hour + 12 : hour;
}

/**
 * Parses a time value into a {@link TimeSpec}, or returns null when it is no time at all.
 * Accepts `now`; `<N> <unit>(s) ago`; Unix seconds as a number or a digit string; ISO 8601 with
 * `Z`, an offset, or none (then it is read in the request's zone); a bare `YYYY-MM-DD`; and
 * `MM/DD/YYYY h:mm am|pm` in any case, with optional seconds, or a bare `MM/DD/YYYY`.
 */
export function parseTimeValue(value: unknown): TimeSpec | null {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0 || value > MAX_UNIX_SECONDS) return null;
    return { kind: 'unix', seconds: value };
  }
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (text.length === 0 || text.length > 64) return null;
  if (text.toLowerCase() === 'now') return { kind: 'now' };

  if (DIGITS.test(text)) {
    const seconds = Number(text);
    return seconds <= MAX_UNIX_SECONDS ? { kind: 'unix', seconds } : null;
  }

  const relative = RELATIVE.exec(text);
  if (relative) {
    const [, digits = '', word = '', , ago] = relative;
    const unit = unitOf(word);
    const amount = Number(digits);
    if (!ago || !unit || amount > MAX_RELATIVE_AMOUNT) return null;
    return { kind: 'ago', amount, unit };
  }

  const iso = ISO.exec(text);
  if (iso) {
    const [, y, mo, d, h, mi, s, frac, zone] = iso;
    const wall = checkedWall({
      year: Number(y),
      month: Number(mo),
      day: Number(d),
      hour: Number(h ?? 0),
      minute: Number(mi ?? 0),
      second: Number(s ?? 0),
      millisecond: Number((frac ?? '0').padEnd(3, '0').slice(0, 3)),
    });
    if (!wall) return null;
    if (zone === undefined) return { kind: 'wall', wall };
    const offset = zone.toUpperCase() === 'Z' ? '+00:00' : normalizeOffset(zone);
    if (offset === null) return null;
    const instant = Temporal.PlainDateTime.from(wall)
      .toZonedDateTime(offset)
      .toInstant().epochMilliseconds;
    return withinRange(instant / 1000) ? { kind: 'instant', epochMilliseconds: instant } : null;
  }

  const us = US.exec(text);
  if (us) {
    const [, mo, d, y, h, mi, s, meridiem] = us;
    const hour = hourOf(Number(h ?? 0), meridiem);
    if (hour === null) return null;
    const wall = checkedWall({
      year: Number(y),
      month: Number(mo),
      day: Number(d),
      hour,
      minute: Number(mi ?? 0),
      second: Number(s ?? 0),
      millisecond: 0,
    });
    return wall ? { kind: 'wall', wall } : null;
  }
  return null;
}

function normalizeOffset(zone: string): string | null {
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
  if (!m) return null;
  const [, sign, hh = '00', mm = '00'] = m;
  if (Number(hh) > 23 || Number(mm) > 59) return null;
  return `${sign}${hh}:${mm}`;
}

function withinRange(seconds: number): boolean {
  return Number.isFinite(seconds) && seconds >= 0 && seconds <= MAX_UNIX_SECONDS;
}

/** Where and when a time value is read. */
export interface TimeContext {
  /** IANA zone for wall-clock readings and calendar steps. */
  timeZone: string;
  /** The current instant in Unix seconds (may carry a fraction). */
  now: number;
}

/** Thrown when a resolved instant falls outside the supported range. */
export class TimeRangeError extends RangeError {}

function zoned(seconds: number, timeZone: string): Temporal.ZonedDateTime {
  return Temporal.Instant.fromEpochMilliseconds(Math.round(seconds * 1000)).toZonedDateTimeISO(
    timeZone,
  );
}

function checkedSeconds(seconds: number): number {
  if (!withinRange(seconds)) throw new TimeRangeError('time is outside 1970-01-01 … 9999-12-31');
  return seconds;
}

/**
 * Moves an instant back by `amount` units. Minutes and hours are exact durations; days and longer
 * are calendar steps on the zone's wall clock, so `7 days ago` keeps the clock time across a DST
 * change and `1 month ago` from March 31 is the last day of February.
 */
export function shiftBack(seconds: number, offset: TimeOffset, timeZone: string): number {
  const { amount, unit } = offset;
  if (unit === 'minute') return checkedSeconds(seconds - amount * 60);
  if (unit === 'hour') return checkedSeconds(seconds - amount * 3600);
  let shifted: Temporal.ZonedDateTime;
  try {
    shifted = zoned(seconds, timeZone).subtract({ [`${unit}s`]: amount });
  } catch {
    throw new TimeRangeError('time is outside 1970-01-01 … 9999-12-31');
  }
  // Keep the fraction of a second that millisecond rounding would otherwise lose.
  const fraction = seconds * 1000 - Math.round(seconds * 1000);
  return checkedSeconds((shifted.epochMilliseconds + fraction) / 1000);
}

/** Turns a wall-clock reading into an instant in `timeZone`; a time skipped by DST moves forward. */
export function wallToSeconds(wall: WallTime, timeZone: string): number {
  const epochMs = Temporal.PlainDateTime.from(wall)
    .toZonedDateTime(timeZone, { disambiguation: 'compatible' })
    .toInstant().epochMilliseconds;
  return checkedSeconds(epochMs / 1000);
}

/** Resolves a parsed time value to Unix seconds. Throws {@link TimeRangeError} when out of range. */
export function resolveTimeSpec(spec: TimeSpec, context: TimeContext): number {
  switch (spec.kind) {
    case 'now':
      return context.now;
    case 'unix':
      return spec.seconds;
    case 'instant':
      return spec.epochMilliseconds / 1000;
    case 'wall':
      return wallToSeconds(spec.wall, context.timeZone);
    case 'ago':
      return shiftBack(context.now, spec, context.timeZone);
  }
}

/**
 * Parses and resolves a time value in one step: Unix seconds, or null when the value is no time
 * or lands outside the supported range.
 */
export function resolveTimeValue(value: unknown, context: TimeContext): number | null {
  const spec = parseTimeValue(value);
  if (!spec) return null;
  try {
    return resolveTimeSpec(spec, context);
  } catch (error) {
    if (error instanceof RangeError) return null;
    throw error;
  }
}

/**
 * Parses a compare offset: `1 week ago`, `7 days`, `1 month ago`, `previous 2 weeks` is not a thing.
 * Returns null for anything else, and for a zero amount (a comparison with itself).
 */
export function parseTimeOffset(value: unknown): TimeOffset | null {
  if (typeof value !== 'string') return null;
  const m = RELATIVE.exec(value.trim());
  if (!m) return null;
  const [, digits = '', word = ''] = m;
  const unit = unitOf(word);
  const amount = Number(digits);
  if (!unit || amount === 0 || amount > MAX_RELATIVE_AMOUNT) return null;
  return { amount, unit };
}
