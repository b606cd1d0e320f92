import type { ClickHouseParams } from '../../storage/clickhouse/clickhouse-params.ts';
import { type ClickHouseRun, clickHouseSettings } from '../../storage/clickhouse/clickhouse-run.ts';
import {
  EVENTS_TABLE,
  quoteClickHouseIdentifier,
} from '../../storage/clickhouse/clickhouse-schema.ts';
import type { ClickHouseBoundQuery } from '../bind/clickhouse/bind-clickhouse-query.ts';
import { readSumParts } from './clickhouse-aggregate-sql.ts';
import { filtersSql } from './clickhouse-fields.ts';

/** The workspace's events table, schema-qualified and quoted. */
export function source(run: ClickHouseRun): string {
  return `${quoteClickHouseIdentifier(run.database)}.${quoteClickHouseIdentifier(EVENTS_TABLE)}`;
}

/** A query's collection, the seconds `lo`…`hi` and its filters, as one condition. */
export function inWindow(
  bound: ClickHouseBoundQuery,
  lo: number,
  hi: number,
  params: ClickHouseParams,
): string {
  return `collection = ${params.add('String', bound.query.collection)}
    AND timestamp BETWEEN ${params.add('Int64', lo)} AND ${params.add('Int64', hi)}
    AND ${filtersSql(bound.query.filters, bound, params)}`;
}

/** Runs a statement under the engine's limits and returns its rows as objects. */
export async function rowsOf<T>(
  run: ClickHouseRun,
  sql: string,
  params: ClickHouseParams,
): Promise<T[]> {
  const result = await run.client.query({
    query: sql,
    format: 'JSONEachRow',
    query_params: params.values,
    clickhouse_settings: {
      ...clickHouseSettings(run),
      output_format_json_quote_64bit_integers: 0,
      // Infinite sums arrive as "inf", not as null, which would read as "no values".
      output_format_json_quote_denormals: 1,
    },
  });
  const rows = await result.json<Record<string, unknown>>();
  for (const row of rows) {
    for (const [name, value] of Object.entries(row)) {
      if (!TEXT_COLUMNS.has(name)) row[name] = denormal(value);
    }
  }
  return rows as T[];
}

/**
 * The run stage of a rendered statement: its rows as arrays of plain values, as the shape stage
 * reads them (infinities and NaN as numbers, except in `text` columns; a sum's parts in `parts`
 * columns as `plan/exact-sum.ts` reads them).
 */
export async function readRows(
  run: ClickHouseRun,
  statement: {
    sql: string;
    params: Record<string, unknown>;
    text: readonly number[];
    parts: readonly number[];
  },
): Promise<unknown[][]> {
  const result = await run.client.query({
    query: statement.sql,
    format: 'JSONCompactEachRow',
    query_params: statement.params,
    clickhouse_settings: {
      ...clickHouseSettings(run),
      output_format_json_quote_64bit_integers: 0,
      output_format_json_quote_denormals: 1,
    },
  });
  const rows = await result.json<unknown[]>();
  return rows.map((row) =>
    row.map((value, i) => {
      if (statement.text.includes(i)) return value;
      if (!statement.parts.includes(i)) return denormal(value);
      const { limbs, rest, count } = readSumParts(value);
      return { h: limbs[0], m: limbs[1], l: limbs[2], r: rest, n: count };
    }),
  );
}

/** A value with ClickHouse's texts of infinities and NaN read as numbers, inside arrays too. */
function denormal(value: unknown): unknown {
  if (typeof value === 'string' && Object.hasOwn(DENORMALS, value)) return DENORMALS[value];
  if (Array.isArray(value)) return value.map(denormal);
  return value;
}

/** The columns of the statements above that hold text, which is never a number. */
const TEXT_COLUMNS = new Set(['sp', 'json']);

/** ClickHouse's JSON texts of the floats JSON has no number for. */
const DENORMALS: Record<string, number> = {
  inf: Number.POSITIVE_INFINITY,
  '+inf': Number.POSITIVE_INFINITY,
  '-inf': Number.NEGATIVE_INFINITY,
  nan: Number.NaN,
  '+nan': Number.NaN,
  '-nan': Number.NaN,
};
