import type { ResultCell, ResultKind } from '../storage/result-table.ts';
import { type TimePoint, wallClockAt, wallClockOfNaive } from './time-labels.ts';

/**
 * Turns neutral result cells into what JSON and charts can carry: numbers for values, time
 * points for labels, and JSON-safe cells for tables (big integers as a number while exact, else
 * a string; NaN and infinities as null; JSON text parsed).
 */

/** Whether a column holds instants or wall-clock readings. */
export function isTimeKind(kind: ResultKind): boolean {
  return kind === 'instant' || kind === 'wall-clock';
}

/** Whether a column holds numbers. */
export function isNumberKind(kind: ResultKind): boolean {
  return kind === 'number';
}

/** Whether a column holds text (JSON text included). */
export function isTextKind(kind: ResultKind): boolean {
  return kind === 'text' || kind === 'json';
}

/** Whether a column can feed a chart's values: numbers, booleans, text holding numbers, NULLs. */
export function canHoldValues(kind: ResultKind): boolean {
  return kind === 'number' || kind === 'boolean' || isTextKind(kind) || kind === 'null';
}

function finite(n: number): number | null {
  return Number.isFinite(n) ? n : null;
}

/**
 * A chart value: numbers as they are (NaN and infinities as null), big integers as the nearest
 * double, booleans as 1/0, text holding a number as that number. Anything else is null;
 * callers refuse non-numeric columns before getting here.
 */
export function toChartNumber(value: ResultCell): number | null {
  if (value === null) return null;
  if (typeof value === 'number') return finite(value);
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string') {
    const trimmed = value.trim();
    return trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : null;
  }
  return null;
}

/**
 * A time point from a cell of a `kind` column: an instant is shown in `timeZone`; a wall-clock
 * reading is shown as it is; numbers are Unix seconds (the `timestamp` column of every
 * collection), shown in `timeZone`. Times the clock cannot place and other values give null.
 */
export function toTimePoint(
  value: ResultCell,
  kind: ResultKind,
  timeZone: string,
): TimePoint | null {
  if (value === null) return null;
  if (kind === 'instant') {
    return typeof value === 'number' ? { wall: wallClockAt(value, timeZone), order: value } : null;
  }
  if (kind === 'wall-clock') {
    return typeof value === 'number' ? { wall: wallClockOfNaive(value), order: value } : null;
  }
  let seconds: number | null = null;
  if (typeof value === 'number') seconds = finite(value);
  else if (typeof value === 'bigint') seconds = Number(value);
  if (seconds === null) return null;
  const ms = Math.floor(seconds) * 1000;
  if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) return null;
  return { wall: wallClockAt(ms, timeZone), order: ms };
}

/**
 * A table cell as JSON: exact integers as numbers, larger ones as strings (JSON numbers would
 * round them), JSON text parsed, and arrays and objects as the driver gave them. Time columns
 * are labelled by the caller instead.
 */
export function toJsonCell(value: ResultCell, kind?: ResultKind): unknown {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') return finite(value);
  if (typeof value === 'bigint') {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if (typeof value === 'string' && kind === 'json') {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  return value;
}
