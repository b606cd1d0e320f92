import type { DuckDBType, DuckDBValue } from '@duckdb/node-api';
import { setOwn } from '../set-own.ts';
import {
  DuckDBArrayValue,
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBListValue,
  DuckDBMapValue,
  DuckDBStructValue,
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue,
  DuckDBTimestampSecondsValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  DuckDBTypeId,
  DuckDBUnionValue,
} from '../storage/duckdb/duckdb-api.ts';
import { type TimePoint, wallClockAt, wallClockOfNaive } from './time-labels.ts';

/**
 * Turns DuckDB values into what JSON and charts can carry: numbers for values, time points for
 * labels, and JSON-safe cells for tables (BIGINT as a number while exact, else a string; DECIMAL
 * as a number; NaN and infinities as null; nested lists and structs as arrays and objects).
 */

const MICROS_PER_MS = 1000n;
const MS_PER_DAY = 86_400_000;

/** Column types that hold instants or wall-clock readings. */
const TIME_TYPES = new Set<DuckDBTypeId>([
  DuckDBTypeId.TIMESTAMP,
  DuckDBTypeId.TIMESTAMP_S,
  DuckDBTypeId.TIMESTAMP_MS,
  DuckDBTypeId.TIMESTAMP_NS,
  DuckDBTypeId.TIMESTAMP_TZ,
  DuckDBTypeId.DATE,
]);

/** Column types whose values are numbers. */
const NUMBER_TYPES = new Set<DuckDBTypeId>([
  DuckDBTypeId.TINYINT,
  DuckDBTypeId.SMALLINT,
  DuckDBTypeId.INTEGER,
  DuckDBTypeId.BIGINT,
  DuckDBTypeId.HUGEINT,
  DuckDBTypeId.UTINYINT,
  DuckDBTypeId.USMALLINT,
  DuckDBTypeId.UINTEGER,
  DuckDBTypeId.UBIGINT,
  DuckDBTypeId.UHUGEINT,
  DuckDBTypeId.BIGNUM,
  DuckDBTypeId.FLOAT,
  DuckDBTypeId.DOUBLE,
  DuckDBTypeId.DECIMAL,
]);

/** Whether a column holds DuckDB time values (TIMESTAMP variants, TIMESTAMPTZ, DATE). */
export function isTimeType(type: DuckDBType): boolean {
  return TIME_TYPES.has(type.typeId);
}

/** Whether a column holds numbers. */
export function isNumberType(type: DuckDBType): boolean {
  return NUMBER_TYPES.has(type.typeId);
}

/** Whether a column can feed a chart's values: numbers, booleans, text holding numbers, NULLs. */
export function canHoldValues(type: DuckDBType): boolean {
  return (
    isNumberType(type) ||
    type.typeId === DuckDBTypeId.BOOLEAN ||
    type.typeId === DuckDBTypeId.VARCHAR ||
    type.typeId === DuckDBTypeId.SQLNULL
  );
}

function finite(n: number): number | null {
  return Number.isFinite(n) ? n : null;
}

/**
 * A chart value: numbers as they are (NaN and infinities as null), BIGINT and DECIMAL as the
 * nearest double, booleans as 1/0, text holding a number as that number. Anything else is null;
 * callers refuse non-numeric columns before getting here.
 */
export function toChartNumber(value: DuckDBValue): number | null {
  if (value === null) return null;
  if (typeof value === 'number') return finite(value);
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof DuckDBDecimalValue) return finite(value.toDouble());
  if (typeof value === 'string') {
    const trimmed = value.trim();
    return trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : null;
  }
  return null;
}

/**
 * A time point from a DuckDB value: TIMESTAMPTZ is an instant shown in `timeZone`; TIMESTAMP
 * (any precision) and DATE are wall-clock readings shown as they are; numbers are Unix seconds
 * (the `timestamp` column of every collection), shown in `timeZone`. Infinite timestamps and
 * other values give null.
 */
export function toTimePoint(value: DuckDBValue, timeZone: string): TimePoint | null {
  if (value === null) return null;
  if (value instanceof DuckDBTimestampTZValue) {
    if (!value.isFinite) return null;
    const ms = Number(floorDiv(value.micros, MICROS_PER_MS));
    return { wall: wallClockAt(ms, timeZone), order: ms };
  }
  const naiveMs = naiveMilliseconds(value);
  if (naiveMs !== null) return { wall: wallClockOfNaive(naiveMs), order: naiveMs };
  let seconds: number | null = null;
  if (typeof value === 'number') seconds = finite(value);
  else if (typeof value === 'bigint') seconds = Number(value);
  else if (value instanceof DuckDBDecimalValue) seconds = finite(value.toDouble());
  if (seconds === null) return null;
  const ms = Math.floor(seconds) * 1000;
  if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) return null;
  return { wall: wallClockAt(ms, timeZone), order: ms };
}

function naiveMilliseconds(value: DuckDBValue): number | null {
  if (value instanceof DuckDBTimestampValue) {
    return value.isFinite ? Number(floorDiv(value.micros, MICROS_PER_MS)) : null;
  }
  if (value instanceof DuckDBTimestampSecondsValue) {
    return value.isFinite ? Number(value.seconds) * 1000 : null;
  }
  if (value instanceof DuckDBTimestampMillisecondsValue) {
    return value.isFinite ? Number(value.millis) : null;
  }
  if (value instanceof DuckDBTimestampNanosecondsValue) {
    return value.isFinite ? Number(floorDiv(value.nanos, 1_000_000n)) : null;
  }
  if (value instanceof DuckDBDateValue) {
    return value.isFinite ? value.days * MS_PER_DAY : null;
  }
  return null;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/**
 * A table cell as JSON: exact integers as numbers, larger ones as strings (JSON numbers would
 * round them), DECIMAL as a number, JSON-typed text parsed, lists, structs and maps as arrays and
 * objects, and every other value (intervals, UUIDs, blobs, nested times) as DuckDB prints it.
 * Top-level time columns are labelled by the caller instead.
 */
export function toJsonCell(value: DuckDBValue, type?: DuckDBType): unknown {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') return finite(value);
  if (typeof value === 'bigint') {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if (typeof value === 'string') {
    if (type?.alias === 'JSON') {
      try {
        return JSON.parse(value);
      } catch {
        return value;
      }
    }
    return value;
  }
  if (value instanceof DuckDBDecimalValue) return finite(value.toDouble());
  if (value instanceof DuckDBListValue || value instanceof DuckDBArrayValue) {
    return value.items.map((item) => toJsonCell(item));
  }
  if (value instanceof DuckDBStructValue) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value.entries)) setOwn(out, key, toJsonCell(item));
    return out;
  }
  if (value instanceof DuckDBMapValue) {
    const out: Record<string, unknown> = {};
    for (const entry of value.entries) {
      setOwn(out, String(toJsonCell(entry.key)), toJsonCell(entry.value));
    }
    return out;
  }
  if (value instanceof DuckDBUnionValue) return toJsonCell(value.value);
  return String(value);
}
