import type { DuckDBType, DuckDBValue } from '@duckdb/node-api';
import {
  BIGINT,
  BOOLEAN,
  DATE,
  DOUBLE,
  dateValue,
  HUGEINT,
  INTEGER,
  LIST,
  listValue,
  MAP,
  mapValue,
  SQLNULL,
  TIMESTAMPTZ,
  timestampTZValue,
  VARCHAR,
} from '../result-vocabulary.ts';
import type { SqlResultTable } from '../shape-sql-result.ts';

/**
 * A ClickHouse result as SQL mode's shaping reads results (`SqlResultTable`, in the engine's
 * result vocabulary, which is DuckDB's types and values), so that both drivers shape rows, label
 * times and refuse columns with one definition. Pure: it reads the rows of ClickHouse's
 * `JSONCompactEachRowWithNamesAndTypes` as the engine asks for them, 64-bit integers quoted and
 * `DateTime` as Unix seconds (`date_time_output_format = 'unix_timestamp'`).
 */

/** The settings under which {@link clickHouseResultTable} reads a result. */
export const RESULT_FORMAT_SETTINGS = {
  output_format_json_quote_64bit_integers: 1,
  output_format_json_quote_denormals: 0,
  date_time_output_format: 'unix_timestamp',
} as const;

/** How the values of one ClickHouse type become the engine's. */
interface Reader {
  type: DuckDBType;
  read: (value: unknown) => DuckDBValue;
}

const MS_PER_DAY = 86_400_000;

/** Strips the wrappers that do not change how values read. */
function bare(type: string): string {
  const m = /^(Nullable|LowCardinality)\((.*)\)$/.exec(type);
  return m ? bare(m[2] as string) : type;
}

function number(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const n = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(n) ? n : null;
}

function bigint(value: unknown): bigint | number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  return number(value);
}

/** A JSON value of a nested type (arrays, tuples, maps) as lists and maps. */
function nested(value: unknown): DuckDBValue {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return listValue(value.map(nested));
  if (typeof value === 'object') {
    return mapValue(
      Object.entries(value as Record<string, unknown>).map(([key, item]) => ({
        key,
        value: nested(item),
      })),
    );
  }
  return value as DuckDBValue;
}

function readerOf(clickHouseType: string): Reader {
  const type = bare(clickHouseType);
  if (/^U?Int(8|16|32)$/.test(type)) return { type: INTEGER, read: number };
  if (/^U?Int64$/.test(type)) return { type: BIGINT, read: bigint };
  if (/^U?Int(128|256)$/.test(type)) return { type: HUGEINT, read: bigint };
  if (/^(Float(32|64)|BFloat16|Decimal)/.test(type)) return { type: DOUBLE, read: number };
  if (type === 'Bool') return { type: BOOLEAN, read: (v) => (v === null ? null : Boolean(v)) };
  if (type === 'Nothing') return { type: SQLNULL, read: () => null };
  if (/^Date(32)?$/.test(type)) {
    return {
      type: DATE,
      read: (v) => (typeof v === 'string' ? dateValue(Date.parse(`${v}Z`) / MS_PER_DAY) : null),
    };
  }
  if (/^DateTime(64)?\b/.test(type)) {
    // An instant: Unix seconds, with a fraction for DateTime64.
    return {
      type: TIMESTAMPTZ,
      read: (v) => {
        const seconds = number(v);
        return seconds === null ? null : timestampTZValue(BigInt(Math.round(seconds * 1e6)));
      },
    };
  }
  if (/^(Array|Tuple)\(/.test(type)) return { type: LIST(VARCHAR), read: nested };
  if (/^Map\(/.test(type)) return { type: MAP(VARCHAR, VARCHAR), read: nested };
  return {
    type: VARCHAR,
    read: (v) => (v === null || v === undefined ? null : typeof v === 'string' ? v : String(v)),
  };
}

/**
 * The lines of a `JSONCompactEachRowWithNamesAndTypes` answer (names, types, then one row a
 * line) as a result table cut at `maxRows`.
 */
export function clickHouseResultTable(lines: string[], maxRows: number): SqlResultTable {
  const names = JSON.parse(lines[0] ?? '[]') as string[];
  const readers = (JSON.parse(lines[1] ?? '[]') as string[]).map(readerOf);
  const rows = lines
    .slice(2, 2 + maxRows)
    .map((line) => (JSON.parse(line) as unknown[]).map((v, i) => (readers[i] as Reader).read(v)));
  return {
    columns: uniqueNames(names),
    types: readers.map((r) => r.type),
    rows,
    truncated: lines.length - 2 > maxRows,
  };
}

/** Column names made unique as SQL mode's rows need them (`a`, `a:1`). */
function uniqueNames(names: string[]): string[] {
  const seen = new Map<string, number>();
  return names.map((name) => {
    const n = seen.get(name) ?? 0;
    seen.set(name, n + 1);
    return n === 0 ? name : `${name}:${n}`;
  });
}
