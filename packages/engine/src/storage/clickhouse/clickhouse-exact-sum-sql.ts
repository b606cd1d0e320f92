import { createHash } from 'node:crypto';

/*
 * The exact sum's parts (`collection/plan/exact-sum.ts`) as ClickHouse SQL, defined once for the
 * statements that read events (`collection/clickhouse/clickhouse-aggregate-sql.ts`) and for the
 * rollups that keep them per span (`clickhouse-rollups.ts`), so both add the same integers.
 */

/** Powers of two as exact Float64 literals, for the fixed-point limbs of `plan/exact-sum.ts`. */
export const P2 = {
  m34: '5.820766091346740722656250e-11',
  p28: '268435456.',
  p62: '4611686018427387904.',
  p90: '1237940039285380274899124224.',
  p96: '79228162514264337593543950336.',
};

/**
 * The parts of the exact sum of `m` as five aggregates of their own, which the rollups keep
 * (`storage/clickhouse/clickhouse-rollups.ts`) and their reads add up again: the three limb sums
 * (Int128, NULL over no value), the count of values, and the values off the grid (Float64).
 */
export interface SumPartAggregates {
  h: string;
  m: string;
  l: string;
  n: string;
  r: string;
}

/** {@link SumPartAggregates} of `metric` over the rows where `condition` holds. */
export function sumPartAggregatesSql(metric: string, condition?: string): SumPartAggregates {
  const and = condition === undefined ? '' : ` AND (${condition})`;
  // Each step is written once, named, and referred to by name.
  const m = aliasOf('m', metric);
  const a = aliasOf('a', `abs(${m.name})`);
  const grid = aliasOf(
    'g',
    `${a.defined} < ${P2.p96} AND ${a.name} * ${P2.p90} = floor(${a.name} * ${P2.p90})`,
  );
  // Off-grid values (infinite scaled) are zeroed before the integer conversion: -If still
  // converts every row.
  const on = aliasOf('o', `if(${grid.name}, ${a.name}, 0.)`);
  const high = aliasOf('h', `floor(${on.defined} * ${P2.m34})`);
  const top = aliasOf('t', `floor(${on.name} * ${P2.p28})`);
  const limb = (x: string) => `sumIf(toInt128(sign(${m.name}) * ${x}), ${grid.name}${and})`;
  return {
    h: limb(high.defined),
    m: limb(`(${top.defined} - ${high.name} * ${P2.p62})`),
    l: limb(`(${on.name} * ${P2.p90} - ${top.name} * ${P2.p62})`),
    n: `countIf(isNotNull(${m.defined})${and})`,
    r: `groupArrayIf(${m.name}, NOT ${grid.defined}${and})`,
  };
}

/** The one text {@link sumPartsSql} writes, of the five aggregates (or their sums). */
export function sumPartsTextSql(parts: SumPartAggregates): string {
  // A Nullable sum over no rows is NULL, which would make the whole text NULL.
  const limb = (x: string) => `coalesce(toString(${x}), '0')`;
  const rest = `arrayStringConcat(arrayMap(x -> toString(reinterpretAsUInt64(x)), ${parts.r}), ' ')`;
  return `concat(${limb(parts.h)}, ' ', ${limb(parts.m)}, ' ', ${limb(parts.l)}, ' ', toString(${parts.n}), ' ', ${rest})`;
}

/**
 * The `se` of a row beside {@link exponentSumsSql}'s that holds limb parts instead (their text
 * as {@link sumPartsTextSql} writes it, the count of values in it): beyond any sign and biased
 * exponent, which fit in 12 bits.
 */
export const LIMB_PARTS_ROW = 4096;

/**
 * The exact sum of `metric` for a statement of one group: its non-NULL values' stored
 * significands (without the implicit bit) summed as Int128 per sign and biased exponent, the top
 * 12 bits of a double, one row per pair: columns `se`, `s` and the count of values `n`
 * (`clickhouse-events.ts` adds the implicit bit back as `n` times 2^52 for a normal exponent, and
 * adds them up as `plan/exact-sum.ts`'s scaled integer). Exact for every finite double, and a few
 * integer steps a row, where the limbs cost ClickHouse a dozen floating-point steps and three
 * Int128 conversions a row; the metric is filtered once and read as not Nullable, as every step
 * on a Nullable column also carries its null map. `select` goes after SELECT, `where` after
 * WHERE's conditions, and `groupBy` ends the statement.
 */
export function exponentSumsSql(metric: string): {
  select: string;
  where: string;
  groupBy: string;
} {
  const m = aliasOf('m', metric);
  const bits = aliasOf('b', `reinterpretAsUInt64(assumeNotNull(${m.defined}))`);
  const se = aliasOf('se', `toUInt16(bitShiftRight(${bits.defined}, 52))`);
  return {
    select: `${se.defined}, toString(sum(toInt128(bitAnd(${bits.name}, 4503599627370495)))), count()`,
    where: `${m.name} IS NOT NULL`,
    groupBy: `GROUP BY ${se.name}`,
  };
}

/**
 * An expression named once (`(expr AS name)`) and referred to by its name elsewhere in the same
 * SELECT, so that a long metric is not repeated; the name is a hash of the expression, and
 * ClickHouse accepts one name given twice to the same expression.
 */
export function aliasOf(kind: string, expr: string): { name: string; defined: string } {
  const name = `__${kind}_${createHash('sha256').update(expr).digest('hex').slice(0, 16)}`;
  return { name, defined: `(${expr} AS ${name})` };
}
