import { setOwn } from '../../set-own.ts';
import type { ResultCell, ResultKind, ResultTable } from '../result-table.ts';

/**
 * A ClickHouse result in the engine's neutral result vocabulary (`../result-table.ts`), so that
 * both drivers' results are shaped, labelled and refused by one definition. Pure: it reads the
 * rows of ClickHouse's `JSONCompactEachRowWithNamesAndTypes` as the engine asks for them, 64-bit
 * integers quoted and `DateTime` as Unix seconds (`date_time_output_format = 'unix_timestamp'`).
 * Type names in messages are the ones DuckDB gives the same kind of column, so that a refused
 * column reads the same on both drivers.
 */

/** The settings under which {@link clickHouseResultTable} reads a result. */
export const RESULT_FORMAT_SETTINGS = {
  output_format_json_quote_64bit_integers: 1,
  output_format_json_quote_denormals: 0,
  date_time_output_format: 'unix_timestamp',
} as const;

/** How the values of one ClickHouse type become the engine's. */
interface Reader {
  kind: ResultKind;
  typeName: string;
  read: (value: unknown) => ResultCell;
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

/** A JSON value of a nested type (arrays, tuples, maps) as arrays and objects. */
function nested(value: unknown): ResultCell {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map(nested);
  if (typeof value === 'object') {
    const out: { [key: string]: ResultCell } = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      setOwn(out, key, nested(item));
    }
    return out;
  }
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  return value as ResultCell;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

function readerOf(clickHouseType: string): Reader {
  const type = bare(clickHouseType);
  if (/^U?Int(8|16|32)$/.test(type)) return { kind: 'number', typeName: 'INTEGER', read: number };
  if (/^U?Int64$/.test(type)) return { kind: 'number', typeName: 'BIGINT', read: bigint };
  if (/^U?Int(128|256)$/.test(type)) return { kind: 'number', typeName: 'HUGEINT', read: bigint };
  if (/^(Float(32|64)|BFloat16|Decimal)/.test(type))
    return { kind: 'number', typeName: 'DOUBLE', read: number };
  if (type === 'Bool') {
    return { kind: 'boolean', typeName: 'BOOLEAN', read: (v) => (v === null ? null : Boolean(v)) };
  }
  if (type === 'Nothing') return { kind: 'null', typeName: 'SQLNULL', read: () => null };
  if (/^Date(32)?$/.test(type)) {
    // A reading: midnight of the day on a UTC clock.
    return {
      kind: 'wall-clock',
      typeName: 'DATE',
      read: (v) => (typeof v === 'string' ? (Date.parse(`${v}Z`) / MS_PER_DAY) * MS_PER_DAY : null),
    };
  }
  if (/^DateTime(64)?\b/.test(type)) {
    // An instant: Unix seconds, with a fraction for DateTime64.
    return {
      kind: 'instant',
      typeName: 'TIMESTAMP WITH TIME ZONE',
      read: (v) => {
        const seconds = number(v);
        if (seconds === null) return null;
        return Number(floorDiv(BigInt(Math.round(seconds * 1e6)), 1000n));
      },
    };
  }
  if (/^(Array|Tuple)\(/.test(type)) return { kind: 'other', typeName: 'VARCHAR[]', read: nested };
  if (/^Map\(/.test(type)) {
    return { kind: 'other', typeName: 'MAP(VARCHAR, VARCHAR)', read: nested };
  }
  return {
    kind: 'text',
    typeName: 'VARCHAR',
    read: (v) => (v === null || v === undefined ? null : typeof v === 'string' ? v : String(v)),
  };
}

/**
 * The lines of a `JSONCompactEachRowWithNamesAndTypes` answer (names, types, then one row a
 * line) as a result table cut at `maxRows`.
 */
export function clickHouseResultTable(lines: string[], maxRows: number): ResultTable {
  const names = JSON.parse(lines[0] ?? '[]') as string[];
  const readers = (JSON.parse(lines[1] ?? '[]') as string[]).map(readerOf);
  const rows = lines
    .slice(2, 2 + maxRows)
    .map((line) => (JSON.parse(line) as unknown[]).map((v, i) => (readers[i] as Reader).read(v)));
  const unique = uniqueNames(names);
  return {
    columns: readers.map((r, i) => ({ name: unique[i] ?? '', kind: r.kind, typeName: r.typeName })),
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
