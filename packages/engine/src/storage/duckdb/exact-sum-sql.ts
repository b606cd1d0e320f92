/**
 * The exact-sum parts of a DuckDB metric, written once for the two places that add them up: a
 * query's Sum and Avg (`collection/duckdb/aggregate-sql.ts`) and the rollups kept at ingest
 * (`rollups.ts`), so that both hold the very same parts and re-add to the same answer.
 */

/** Powers of two as exact DOUBLE literals, for the fixed-point limbs of `plan/exact-sum.ts`. */
const P2 = {
  m34: '5.820766091346740722656250e-11::DOUBLE',
  p28: '2.68435456e8::DOUBLE',
  p62: '4.611686018427387904e18::DOUBLE',
  p90: '1.237940039285380274899124224e27::DOUBLE',
  p96: '7.9228162514264337593543950336e28::DOUBLE',
};

/**
 * How a statement adds a metric's values for Sum and Avg: as one integer each where that is
 * exact (`whole`, {@link wholeSumPartsSql}), or by their limbs (`limbs`, {@link sumPartsSql}).
 */
export type SumForm = 'whole' | 'limbs';

/** The sum's parts of `m` in the form `form` (see {@link SumForm}; none given: by their limbs). */
export function sumFormSql(form: SumForm | undefined, m: string, condition = 'TRUE'): string {
  return form === 'whole' ? wholeSumPartsSql(m, condition) : sumPartsSql(m, condition);
}

/**
 * The exact sum of `m` as one integer, where that is exact: a struct of the count `n`, the
 * smallest magnitude other than zero `q` (1 for zeros alone), and `w`, the sum of each value
 * times 2^62 cast to HUGEINT (`plan/exact-sum.ts`'s `readSumParts` reads them, and refuses a `q`
 * below 2^-10). Any value of magnitude 2^-10 or more is a whole multiple of 2^-62, so each cast
 * is then exact; a product out of HUGEINT's range, or a sum past it, is DuckDB's out-of-range
 * error rather than a wrong sum. One cast and one integer sum per value, where the limbs take a
 * dozen steps.
 */
export function wholeSumPartsSql(m: string, condition = 'TRUE'): string {
  const only = condition === 'TRUE' ? '' : ` FILTER (WHERE ${condition})`;
  // A zero is whole: it counts as 1, which a CASE does for less than a FILTER of its own.
  const magnitude = `CASE WHEN ${m} = 0 THEN 1.0::DOUBLE ELSE abs(${m}) END`;
  return `{'n': count(${m})${only}, 'q': min(${magnitude})${only}, 'w': sum((${m} * ${P2.p62})::HUGEINT)${only}}`;
}

/** Whether `error` is DuckDB's refusal of {@link wholeSumPartsSql}: a cast or a sum out of range. */
export function isOutOfRange(error: unknown): boolean {
  return error instanceof Error && /^(Conversion|Out of Range) Error: /.test(error.message);
}

/**
 * The parts of the exact sum of `m` (`plan/exact-sum.ts`): a struct of the three limb sums of
 * |m|·2^90 (62 bits each, signed by m, summed as BIGINT into HUGEINT) for the values on that
 * grid, the other values as a list, and the count, as `plan/exact-sum.ts`'s `readSumParts` reads
 * them once run has made the struct a plain object. Integer sums do not depend on the order
 * the threads add in.
 */
export function sumPartsSql(m: string, condition = 'TRUE'): string {
  const only = condition === 'TRUE' ? '' : ` FILTER (WHERE ${condition})`;
  const { grid, limbs } = limbsSql(m);
  const off = `FILTER (WHERE (${condition}) AND NOT ${grid})`;
  const limb = (x: string) => `sum(${x})${only}`;
  return `{'h': ${limb(limbs.h)}, 'm': ${limb(limbs.m)}, 'l': ${limb(limbs.l)}, 'r': list(${m}) ${off}, 'n': count(${m})${only}}`;
}

/** Whether `m` is on the fixed-point grid, and its three limbs as BIGINT expressions (null for null). */
function limbsSql(m: string): { grid: string; limbs: { h: string; m: string; l: string } } {
  const a = `abs(${m})`;
  const grid = `(${a} < ${P2.p96} AND ${a} * ${P2.p90} = floor(${a} * ${P2.p90}))`;
  // Off-grid values are zeroed before the integer conversion, which sees every row.
  const on = `(CASE WHEN ${grid} THEN ${a} ELSE 0 END)`;
  const high = `floor(${on} * ${P2.m34})`;
  const top = `floor(${on} * ${P2.p28})`;
  const signed = (x: string) => `(sign(${m}) * ${x})::BIGINT`;
  return {
    grid,
    limbs: {
      h: signed(high),
      m: signed(`(${top} - ${high} * ${P2.p62})`),
      l: signed(`(${on} * ${P2.p90} - ${top} * ${P2.p62})`),
    },
  };
}

/**
 * One value's share of the parts of {@link sumPartsSql}, as a relation: the rows of `source`,
 * whose column `v` is the value, with its limbs `h`, `m`, `l`, `r` (itself in a list when off
 * the grid) and `n` (1, or 0 for null) beside the columns `carry`, so that a statement can add
 * single values and rows of already added parts (the rollups') in one aggregation. Each step
 * is a column of its own layer, written once: DuckDB plans a statement with parameters anew at
 * every run, and the limbs written out in full repeat the grid test and its operands many times.
 */
export function valuePartsRelation(source: string, carry: readonly string[]): string {
  const keep = carry.map((c) => `${c}, `).join('');
  const abs = `SELECT ${keep}v, abs(v) AS a FROM (${source})`;
  const grid = `SELECT ${keep}v, a, (a < ${P2.p96} AND a * ${P2.p90} = floor(a * ${P2.p90})) AS g FROM (${abs})`;
  // Off-grid values are zeroed before the integer conversion, which sees every row.
  const on = `SELECT ${keep}v, g, sign(v) AS s, (CASE WHEN g THEN a ELSE 0 END) AS o FROM (${grid})`;
  const floors = `SELECT ${keep}v, g, s, o, floor(o * ${P2.m34}) AS hi, floor(o * ${P2.p28}) AS top FROM (${on})`;
  return `SELECT ${keep}(s * hi)::BIGINT AS h, (s * (top - hi * ${P2.p62}))::BIGINT AS m, (s * (o * ${P2.p90} - top * ${P2.p62}))::BIGINT AS l, (CASE WHEN NOT g THEN [v] END) AS r, (v IS NOT NULL)::BIGINT AS n FROM (${floors})`;
}
