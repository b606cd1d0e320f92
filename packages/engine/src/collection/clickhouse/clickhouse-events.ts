import { EXCEPTION_TAG_HEADER_NAME, extractErrorAtTheEndOfChunk } from '@clickhouse/client-web';
import { LIMB_PARTS_ROW } from '../../storage/clickhouse/clickhouse-exact-sum-sql.ts';
import { type ClickHouseRun, clickHouseSettings } from '../../storage/clickhouse/clickhouse-run.ts';
import { percentileOfRanks } from '../shape/growing-percentiles.ts';
import type { ClickHouseStatement } from './clickhouse-statement.ts';

/**
 * The run stage of a rendered statement: its rows as arrays of plain values, as the shape stage
 * reads them (infinities and NaN as numbers, except in `text` columns; a sum's parts in `parts`
 * columns as `plan/exact-sum.ts` reads them).
 */
export async function readRows(
  run: ClickHouseRun,
  statement: ClickHouseStatement,
): Promise<unknown[][]> {
  const { sql, params } = statement;
  const result = await run.client.query({
    query: sql,
    format: 'JSONCompactEachRow',
    // Only the parameters the statement names travel (in the URL): a renderer starts from all of the bound query's.
    query_params: Object.fromEntries(
      Object.entries(params).filter(([name]) => sql.includes(`{${name}:`)),
    ),
    clickhouse_settings: {
      ...clickHouseSettings(run),
      output_format_json_quote_64bit_integers: 0,
      // Infinite sums arrive as "inf", not as null, which would read as "no values".
      output_format_json_quote_denormals: 1,
    },
  });
  const rows = compactRows(await result.text(), result.response_headers[EXCEPTION_TAG_HEADER_NAME]);
  if (statement.exponentSums) return [[exponentSumParts(rows)]];
  if (statement.percentile !== undefined) return [[percentileOfRow(statement.percentile, rows)]];
  return rows.map((row) =>
    row.map((value, i) => {
      if (statement.text.includes(i)) return value;
      return statement.parts.includes(i) ? sumParts(value) : denormal(value);
    }),
  );
}

/**
 * The rows of a `JSONCompactEachRow` answer read whole, which costs less than the client's
 * row-by-row stream. As that stream does, an exception ClickHouse appended to the answer (after
 * a line ending in `\r\n`, which no JSON row holds, where `tag` came in the answer's headers)
 * is thrown as the client's error.
 */
function compactRows(text: string, tag: string | string[] | undefined): unknown[][] {
  if (typeof tag === 'string' && text.includes('\r\n')) {
    throw extractErrorAtTheEndOfChunk(new TextEncoder().encode(text), tag);
  }
  const rows: unknown[][] = [];
  let start = 0;
  while (start < text.length) {
    const end = text.indexOf('\n', start);
    const line = text.slice(start, end < 0 ? text.length : end);
    if (line !== '') rows.push(JSON.parse(line) as unknown[]);
    start = end < 0 ? text.length : end + 1;
  }
  return rows;
}

/**
 * A sum's parts from the text `sumPartsSql` (`clickhouse-aggregate-sql.ts`) writes: the three
 * limb sums, the count, then the bits of each value off the grid; as `plan/exact-sum.ts` reads
 * them.
 */
function sumParts(text: unknown) {
  const [h, m, l, n, ...rest] = typeof text === 'string' && text !== '' ? text.split(' ') : [];
  const view = new DataView(new ArrayBuffer(8));
  return {
    h: BigInt(h ?? 0),
    m: BigInt(m ?? 0),
    l: BigInt(l ?? 0),
    r: rest
      .filter((bits) => bits !== '')
      .map((bits) => {
        view.setBigUint64(0, BigInt(bits));
        return view.getFloat64(0);
      }),
    n: Number(n ?? 0),
  };
}

/**
 * A sum's parts from the rows `exponentSumsSql` writes, `[sign and biased exponent, sum of
 * stored significands, count]` each: the sum as an integer times 2^-1074 (a significand of
 * biased exponent e, its implicit bit 2^52 added where e is not 0, weighs 2^(max(e, 1) - 1) of
 * those), as `plan/exact-sum.ts` reads it, with the limb parts of a row `[LIMB_PARTS_ROW, text]`
 * (a rollup read's, its count in the text). No rows: no parts, as a sum over no rows reads.
 */
function exponentSumParts(rows: unknown[][]) {
  if (rows.length === 0) return null;
  const limbRow = rows.find(([se]) => Number(se) === LIMB_PARTS_ROW);
  const { h, m, l, r, n: limbCount } = sumParts(limbRow?.[1]);
  let scaled = 0n;
  let n = limbCount;
  for (const [se, sum, count] of rows) {
    if (Number(se) === LIMB_PARTS_ROW) continue;
    const exponent = Number(se) & 2047;
    // Infinities and NaN never reach a metric's numeric form; counted as numbers they would be wrong.
    if (exponent === 2047) throw new Error('a non-finite metric value reached an exact sum');
    const implicit = exponent === 0 ? 0n : BigInt(Number(count)) << 52n;
    const magnitude = (BigInt(String(sum)) + implicit) << BigInt(Math.max(exponent, 1) - 1);
    scaled += Number(se) & 2048 ? -magnitude : magnitude;
    n += Number(count);
  }
  return { h, m, l, r, n, s: scaled };
}

/**
 * The percentile at `level` from the row `percentileRanksSql` writes, `[count, [x[⌊h⌋], x[⌈h⌉]]]`
 * (one value where the two ranks are one): h = level·(n − 1) as the SQL computed it, then the
 * number rule's interpolation; null for no values.
 */
function percentileOfRow(level: number, rows: unknown[][]): number | null {
  const [count, ranks] = rows[0] ?? [];
  const n = Number(count ?? 0);
  if (n === 0) return null;
  const values = (ranks as unknown[]).map((x) => denormal(x) as number);
  return percentileOfRanks(level, n, values[0] as number, values.at(-1) as number);
}

/** A value with ClickHouse's texts of infinities and NaN read as numbers, inside arrays too. */
function denormal(value: unknown): unknown {
  if (typeof value === 'string' && Object.hasOwn(DENORMALS, value)) return DENORMALS[value];
  if (Array.isArray(value)) return value.map(denormal);
  return value;
}

/** ClickHouse's JSON texts of the floats JSON has no number for. */
const DENORMALS: Record<string, number> = {
  inf: Number.POSITIVE_INFINITY,
  '+inf': Number.POSITIVE_INFINITY,
  '-inf': Number.NEGATIVE_INFINITY,
  nan: Number.NaN,
  '+nan': Number.NaN,
  '-nan': Number.NaN,
};
