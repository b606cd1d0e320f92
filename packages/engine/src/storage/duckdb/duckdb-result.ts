import type { DuckDBType, DuckDBValue } from '@duckdb/node-api';
import { setOwn } from '../../set-own.ts';
import type { ResultCell, ResultColumn, ResultKind } from '../result-table.ts';
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
} from './duckdb-api.ts';

/**
 * DuckDB's results in the engine's neutral result vocabulary (`../result-table.ts`): column
 * types become kinds, and values become JavaScript values (BIGINT stays a `bigint`, DECIMAL
 * becomes the nearest double, times become milliseconds, nested lists, structs and maps become
 * arrays and objects, and every other value the text DuckDB prints for it).
 */

const MICROS_PER_MS = 1000n;
const MS_PER_DAY = 86_400_000;

/** Column types that hold wall-clock readings. */
const WALL_CLOCK_TYPES = new Set<DuckDBTypeId>([
  DuckDBTypeId.TIMESTAMP,
  DuckDBTypeId.TIMESTAMP_S,
  DuckDBTypeId.TIMESTAMP_MS,
  DuckDBTypeId.TIMESTAMP_NS,
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

function kindOf(type: DuckDBType): ResultKind {
  const id = type.typeId;
  if (id === DuckDBTypeId.TIMESTAMP_TZ) return 'instant';
  if (WALL_CLOCK_TYPES.has(id)) return 'wall-clock';
  if (NUMBER_TYPES.has(id)) return 'number';
  if (id === DuckDBTypeId.BOOLEAN) return 'boolean';
  if (id === DuckDBTypeId.VARCHAR) return type.alias === 'JSON' ? 'json' : 'text';
  if (id === DuckDBTypeId.SQLNULL) return 'null';
  return 'other';
}

/** The neutral columns of a DuckDB result, from its (deduplicated) names and types. */
export function duckDBResultColumns(names: string[], types: DuckDBType[]): ResultColumn[] {
  return names.map((name, i) => {
    const type = types[i] as DuckDBType;
    return { name, kind: kindOf(type), typeName: type.toString() };
  });
}

/** A DuckDB row as neutral cells, one per column of `columns`. */
export function duckDBResultRow(row: DuckDBValue[], columns: ResultColumn[]): ResultCell[] {
  return row.map((value, i) => resultCell(value, columns[i]?.kind ?? 'other'));
}

function resultCell(value: DuckDBValue, kind: ResultKind): ResultCell {
  if (value === null) return null;
  switch (kind) {
    case 'instant':
      return value instanceof DuckDBTimestampTZValue && value.isFinite
        ? Number(floorDiv(value.micros, MICROS_PER_MS))
        : String(value);
    case 'wall-clock':
      return naiveMilliseconds(value) ?? String(value);
    case 'number':
      if (value instanceof DuckDBDecimalValue) return value.toDouble();
      return typeof value === 'number' || typeof value === 'bigint' ? value : jsonOf(value);
    case 'boolean':
    case 'text':
    case 'json':
      return typeof value === 'boolean' || typeof value === 'string' ? value : jsonOf(value);
    default:
      return jsonOf(value);
  }
}

/** Milliseconds of a wall-clock reading, or null for infinite ones and other values. */
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

function finite(n: number): number | null {
  return Number.isFinite(n) ? n : null;
}

/**
 * A value as JSON carries it: exact integers as numbers, larger ones as strings (JSON numbers
 * would round them), DECIMAL as a number, lists, structs and maps as arrays and objects, and
 * every other value (intervals, UUIDs, blobs, nested times) as DuckDB prints it.
 */
function jsonOf(value: DuckDBValue): ResultCell {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') return finite(value);
  if (typeof value === 'bigint') {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if (value instanceof DuckDBDecimalValue) return finite(value.toDouble());
  if (value instanceof DuckDBListValue || value instanceof DuckDBArrayValue) {
    return value.items.map((item) => jsonOf(item));
  }
  if (value instanceof DuckDBStructValue) {
    const out: { [key: string]: ResultCell } = {};
    for (const [key, item] of Object.entries(value.entries)) setOwn(out, key, jsonOf(item));
    return out;
  }
  if (value instanceof DuckDBMapValue) {
    const out: { [key: string]: ResultCell } = {};
    for (const entry of value.entries) setOwn(out, String(jsonOf(entry.key)), jsonOf(entry.value));
    return out;
  }
  if (value instanceof DuckDBUnionValue) return jsonOf(value.value);
  return String(value);
}
