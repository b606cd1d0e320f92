import type { Aggregation } from '@analytics-chart/protocol';
import type { ClickHouseParams } from '../../storage/clickhouse/clickhouse-params.ts';
import { QUANTILE } from '../plan/collection-plan.ts';
import { ExactSum, type SumParts } from '../plan/exact-sum.ts';

/** 2^64, by which Avg and percentiles scale values where plain arithmetic would overflow. */
const SCALE = 'toFloat64(18446744073709551616.)';

/** Powers of two as exact Float64 literals, for the fixed-point limbs of `plan/exact-sum.ts`. */
const P2 = {
  m34: '5.820766091346740722656250e-11',
  p28: '268435456.',
  p62: '4611686018427387904.',
  p90: '1237940039285380274899124224.',
  p96: '79228162514264337593543950336.',
};

/**
 * The parts of the exact sum of `m` (`plan/exact-sum.ts`) as one text: the three limb sums of
 * |m|·2^90 (62 bits each, signed by m, summed in Int128) for the values on that grid, the count,
 * then the bits of each value off the grid. Integer sums do not depend on the order parts are
 * merged in.
 */
export function sumPartsSql(m: string, condition?: string): string {
  if (m === 'NULL') return `''`;
  const and = condition === undefined ? '' : ` AND (${condition})`;
  const a = `abs(${m})`;
  const grid = `(${a} < ${P2.p96} AND ${a} * ${P2.p90} = floor(${a} * ${P2.p90}))`;
  // Off-grid values (infinite scaled) are zeroed before the integer conversion: -If still
  // converts every row.
  const on = `if(${grid}, ${a}, 0.)`;
  const high = `floor(${on} * ${P2.m34})`;
  const top = `floor(${on} * ${P2.p28})`;
  const limb = (x: string) =>
    `coalesce(toString(sumIf(toInt128(sign(${m}) * ${x}), ${grid}${and})), '0')`;
  const rest = `arrayStringConcat(arrayMap(x -> toString(reinterpretAsUInt64(x)), groupArrayIf(${m}, NOT ${grid}${and})), ' ')`;
  return `concat(${limb(high)}, ' ', ${limb(`(${top} - ${high} * ${P2.p62})`)}, ' ', ${limb(
    `(${on} * ${P2.p90} - ${top} * ${P2.p62})`,
  )}, ' ', toString(countIf(isNotNull(${m})${and})), ' ', ${rest})`;
}

/** The parts {@link sumPartsSql} wrote. */
export function readSumParts(text: unknown): SumParts {
  const [h, m, l, n, ...rest] = typeof text === 'string' && text !== '' ? text.split(' ') : [];
  const view = new DataView(new ArrayBuffer(8));
  return {
    limbs: [BigInt(h ?? 0), BigInt(m ?? 0), BigInt(l ?? 0)],
    count: Number(n ?? 0),
    rest: rest
      .filter((bits) => bits !== '')
      .map((bits) => {
        view.setBigUint64(0, BigInt(bits));
        return view.getFloat64(0);
      }),
  };
}

/**
 * An aggregate's value from its column: Sum and Avg from their parts, rounded once (Sum over
 * none is 0, Avg null); the others as the number (or null) they are.
 */
export function readAggregate(aggregation: Aggregation, value: unknown): number | null {
  if (aggregation === 'Sum' || aggregation === 'Avg') {
    const sum = new ExactSum().addParts(readSumParts(value));
    return aggregation === 'Sum' ? sum.sum() : sum.mean();
  }
  return typeof value === 'number'
    ? value
    : value === null || value === undefined
      ? null
      : Number(value);
}

/**
 * The aggregate over `m` (NULL where the field has no number), and how an empty set reads. Sum
 * and Avg are their parts ({@link sumPartsSql}, read by {@link readAggregate}); where SQL must
 * order by them, {@link aggregateOrderSql} is the key.
 */
export function aggregateSql(
  aggregation: Aggregation,
  m: string,
  params: ClickHouseParams,
  condition?: string,
): string {
  // The -If combinators aggregate only the rows where `condition` holds.
  const only = condition === undefined ? '' : 'If';
  if (aggregation === 'Count') return `toFloat64(count${only}(${condition ?? ''}))`;
  if (aggregation === 'Sum' || aggregation === 'Avg') return sumPartsSql(m, condition);
  const p = params.add('Float64', QUANTILE[aggregation]);
  return percentileSql(m, p, condition);
}

/**
 * The percentile rule both drivers write as the same IEEE steps (DuckDB's `percentileSql`):
 * the sorted values x, h = level·(n−1) as a double, lo = x[⌊h⌋], hi = x[⌈h⌉], d = h − ⌊h⌋, and
 * lo + d·(hi − lo); where hi − lo overflows, lo·(1 − d) + hi·d. NULL for no values.
 */
function percentileSql(m: string, level: string, condition?: string): string {
  const values = condition === undefined ? `groupArray(${m})` : `groupArrayIf(${m}, ${condition})`;
  const sorted = `arraySort(${values})`;
  const h = `(${level} * (toFloat64(length(${sorted})) - 1.))`;
  const lo = `arrayElement(${sorted}, toInt64(floor(${h})) + 1)`;
  const hi = `arrayElement(${sorted}, toInt64(ceil(${h})) + 1)`;
  const d = `(${h} - floor(${h}))`;
  const near = `(${lo} + ${d} * (${hi} - ${lo}))`;
  return `if(length(${sorted}) = 0, NULL, if(isFinite(${near}), ${near}, ${lo} * (1. - ${d}) + ${hi} * ${d}))`;
}

/**
 * A Float64 that orders groups as their aggregate does (an empty Sum 0), up to the last bits of
 * Sum and Avg, which the engine orders exactly again among the rows this key selects.
 */
export function aggregateOrderSql(
  aggregation: Aggregation,
  m: string,
  params: ClickHouseParams,
): string {
  if (aggregation === 'Sum') return `coalesce(sumOrNull(${m}), 0)`;
  if (aggregation === 'Avg') return `avgOrNull(${m} / ${SCALE})`;
  if (aggregation === 'Count') return aggregateSql(aggregation, m, params);
  return aggregateSql(aggregation, m, params);
}
