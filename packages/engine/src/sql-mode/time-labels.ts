import type { WallTime } from '@analytics-chart/protocol';

/**
 * Time values of SQL results as labels in the request's zone, in the formats of collection mode
 * (docs/query-semantics.md): Month `2024-03`, Week and Day `2024-03-05`, Hour `2024-03-05 14:00`, Minute
 * `2024-03-05 14:07`, plus Second `2024-03-05 14:07:09` for values finer than a minute. A SQL
 * query states no granularity, so each column's is read from its values (see {@link labelFormat}).
 */

/** A reading of a wall clock (the protocol's own type). */
export type WallClock = WallTime;

/** A time value ready to label: its wall clock and a key that orders values in time. */
export interface TimePoint {
  wall: WallClock;
  order: number;
}

/** The label granularity of a column, read from its values. */
export type LabelGranularity = 'Month' | 'Week' | 'Day' | 'Hour' | 'Minute' | 'Second';

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    if (formatters.size < 500) formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The wall clock of an instant (epoch milliseconds) in an IANA zone. */
export function wallClockAt(epochMilliseconds: number, timeZone: string): WallClock {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(epochMilliseconds)) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return {
    year: parts.year ?? 1970,
    month: parts.month ?? 1,
    day: parts.day ?? 1,
    hour: parts.hour ?? 0,
    minute: parts.minute ?? 0,
    second: parts.second ?? 0,
    millisecond: ((epochMilliseconds % 1000) + 1000) % 1000,
  };
}

/** The wall clock of a zone-less reading counted like UTC (DuckDB's TIMESTAMP and DATE). */
export function wallClockOfNaive(epochMilliseconds: number): WallClock {
  const date = new Date(epochMilliseconds);
  return {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
    second: date.getUTCSeconds(),
    millisecond: date.getUTCMilliseconds(),
  };
}

function isMonday(wall: WallClock): boolean {
  return new Date(Date.UTC(wall.year, wall.month - 1, wall.day)).getUTCDay() === 1;
}

/**
 * The coarsest granularity every value of a column fits: any seconds make it Second, any minutes
 * Minute, any hours Hour; values all at midnight are Day, or Month when there are at least two
 * distinct ones and all fall on the 1st, or Week when they all fall on a Monday (collection
 * mode's week start). A single midnight value stays Day: one point cannot tell a month apart.
 */
export function labelFormat(points: readonly TimePoint[]): LabelGranularity {
  let finest: LabelGranularity = 'Day';
  for (const { wall } of points) {
    if (wall.second !== 0 || wall.millisecond !== 0) return 'Second';
    if (wall.minute !== 0) finest = 'Minute';
    else if (wall.hour !== 0 && finest === 'Day') finest = 'Hour';
  }
  if (finest !== 'Day') return finest;
  const distinct = new Set(points.map((p) => p.order));
  if (distinct.size < 2) return 'Day';
  if (points.every((p) => p.wall.day === 1)) return 'Month';
  if (points.every((p) => isMonday(p.wall))) return 'Week';
  return 'Day';
}

function pad(value: number, width = 2): string {
  return String(value).padStart(width, '0');
}

/** The label of a wall clock at a granularity. */
export function formatLabel(wall: WallClock, granularity: LabelGranularity): string {
  const day = `${pad(wall.year, 4)}-${pad(wall.month)}-${pad(wall.day)}`;
  switch (granularity) {
    case 'Month':
      return `${pad(wall.year, 4)}-${pad(wall.month)}`;
    case 'Week':
    case 'Day':
      return day;
    case 'Hour':
      return `${day} ${pad(wall.hour)}:00`;
    case 'Minute':
      return `${day} ${pad(wall.hour)}:${pad(wall.minute)}`;
    case 'Second': {
      const ms = wall.millisecond ? `.${pad(wall.millisecond, 3)}` : '';
      return `${day} ${pad(wall.hour)}:${pad(wall.minute)}:${pad(wall.second)}${ms}`;
    }
  }
}
