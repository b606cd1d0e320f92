import type { Aggregation } from '@analytics-chart/protocol';
import { QUANTILE } from '../plan/collection-plan.ts';

/** 2^64, by which percentiles scale values where plain arithmetic would overflow. */
const SCALE = '18446744073709551616.0::DOUBLE';

/** Powers of two as exact DOUBLE literals, for the fixed-point limbs of `plan/exact-sum.ts`. */
const P2 = {
  m34: '5.820766091346740722656250e-11::DOUBLE',
  p28: '2.68435456e8::DOUBLE',
  p62: '4.611686018427387904e18::DOUBLE',
  p90: '1.237940039285380274899124224e27::DOUBLE',
  p96: '7.9228162514264337593543950336e28::DOUBLE',
};

/**
 * The parts of the exact sum of `m` (`plan/exact-sum.ts`): a struct of the three limb sums of
 * |m|·2^90 (62 bits each, signed by m, summed as BIGINT into HUGEINT) for the values on that
 * grid, the other values as a list, and the count, as `plan/exact-sum.ts`'s `readSumParts` reads
 * them once run has made the struct a plain object. Integer sums do not depend on the order
 * the threads add in.
 */
export function sumPartsSql(m: string, condition = 'TRUE'): string {
  const a = `abs(${m})`;
  const grid = `(${a} < ${P2.p96} AND ${a} * ${P2.p90} = floor(${a} * ${P2.p90}))`;
  const only = condition === 'TRUE' ? '' : ` FILTER (WHERE ${condition})`;
  const off = `FILTER (WHERE (${condition}) AND NOT ${grid})`;
  // Off-grid values are zeroed before the integer conversion, which sees every row.
  const on = `(CASE WHEN ${grid} THEN ${a} ELSE 0 END)`;
  const high = `floor(${on} * ${P2.m34})`;
  const top = `floor(${on} * ${P2.p28})`;
  const limb = (x: string) => `sum((sign(${m}) * ${x})::BIGINT)${only}`;
  return `{'h': ${limb(high)}, 'm': ${limb(`(${top} - ${high} * ${P2.p62})`)}, 'l': ${limb(
    `(${on} * ${P2.p90} - ${top} * ${P2.p62})`,
  )}, 'r': list(${m}) ${off}, 'n': count(${m})${only}}`;
}

/**
 * The aggregate over a numeric expression `m` (ignored by Count), optionally restricted to the
 * rows where `condition` holds, or over the window `over`. Sum and Avg are their parts
 * ({@link sumPartsSql}, read by `plan/exact-sum.ts`'s `readAggregate`); where SQL must order by them,
 * {@link aggregateOrderSql} is the key. Percentiles are `quantile_cont`: linear interpolation
 * between the closest ranks.
 */
export function aggregateSql(
  aggregation: Aggregation,
  m: string | null,
  condition = 'TRUE',
  over = '',
): string {
  // `over`: a window (` OVER (…)`) each aggregate call is computed over, instead of a group.
  const filter = (condition === 'TRUE' ? '' : ` FILTER (WHERE ${condition})`) + over;
  if (aggregation === 'Count') return `count(*)${filter}`;
  if (m === null) return 'NULL';
  if (aggregation === 'Sum' || aggregation === 'Avg') return sumPartsSql(m, condition);
  const p = QUANTILE[aggregation];
  if (over !== '') {
    // Over a growing window: quantile_cont, which weighs the two ranks (lo·(1−d) + hi·d) and so
    // rounds equal subnormal ranks to 0: values scaled up by 2^64 are normal, and scaling back
    // is exact. Where scaled values overflow, the plain interpolation is right.
    const scaled = `quantile_cont(${m} * ${SCALE}, ${p})${filter}`;
    return `CASE WHEN isfinite(${scaled}) THEN ${scaled} / ${SCALE} ELSE quantile_cont(${m}, ${p})${filter} END`;
  }
  return percentileSql(m, p as number, condition);
}

/**
 * The percentile rule both drivers write as the same IEEE steps: the sorted values x, h =
 * level·(n−1) as a double, lo = x[⌊h⌋], hi = x[⌈h⌉], d = h − ⌊h⌋, and lo + d·(hi − lo) (equal
 * ranks, subnormal ones too, give lo exactly); where hi − lo overflows (ranks near ±1.8e308 on
 * both sides), lo·(1 − d) + hi·d, which cannot.
 */
function percentileSql(m: string, level: number, condition: string): string {
  const sorted = `list_sort(list(${m}) FILTER (WHERE (${condition}) AND ${m} IS NOT NULL))`;
  const h = `(${level}::DOUBLE * (len(${sorted}) - 1)::DOUBLE)`;
  const lo = `${sorted}[floor(${h})::BIGINT + 1]`;
  const hi = `${sorted}[ceil(${h})::BIGINT + 1]`;
  const d = `(${h} - floor(${h}))`;
  const near = `(${lo} + ${d} * (${hi} - ${lo}))`;
  return `CASE WHEN isfinite(${near}) THEN ${near} ELSE ${lo} * (1 - ${d}) + ${hi} * ${d} END`;
}

/**
 * A DOUBLE that orders groups as their aggregate does, up to the last bits of Sum and Avg
 * (which the engine orders exactly again in JavaScript among the rows this key selects).
 */
export function aggregateOrderSql(aggregation: Aggregation, m: string | null): string {
  if (m === null) return aggregation === 'Sum' ? '0::DOUBLE' : 'NULL::DOUBLE';
  if (aggregation === 'Sum') return `coalesce(sum(${m}), 0)`;
  if (aggregation === 'Avg') return `avg(${m} / ${SCALE})`;
  return aggregateSql(aggregation, m);
}
