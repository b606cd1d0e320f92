/**
 * How a rollup row keeps a metric's grid sum (the exact sum's fixed-point integer,
 * `collection/plan/exact-sum.ts`): as four BIGINT digits in base 2^62, the lower three in
 * [0, 2^62) and the top one signed, rather than as the three 62-bit limbs' sums in HUGEINT,
 * because DuckDB reads and adds BIGINT columns much faster. The digits are the integer's own
 * (carried across limbs), so they hold any span's sum exactly: |sum| < n·2^186 for n values,
 * and the top digit's range bounds n, not the values. A sum of digits over any number of rows
 * stays exact in DuckDB's HUGEINT accumulator, and a digit that does not fit BIGINT errors, in
 * SQL's cast as in the appender.
 */

/** Bits per digit: the limbs' width, so that a digit of the limbs' weights adds to a limb. */
const DIGIT_BITS = 62n;
const MASK = (1n << DIGIT_BITS) - 1n;
/** 2^62 and its mask as HUGEINT literals. */
const RADIX_SQL = `${1n << DIGIT_BITS}::HUGEINT`;
const MASK_SQL = `${MASK}::HUGEINT`;

/** The column suffixes of the digits, lowest first (weights 1, 2^62, 2^124, 2^186). */
export const DIGITS = ['d0', 'd1', 'd2', 'd3'] as const;

/** A grid integer's four digits, lowest first. */
export function sumDigits(grid: bigint): [bigint, bigint, bigint, bigint] {
  // BigInt shifts floor and masks take two's complement: the lower digits are never negative.
  return [
    grid & MASK,
    (grid >> DIGIT_BITS) & MASK,
    (grid >> (2n * DIGIT_BITS)) & MASK,
    grid >> (3n * DIGIT_BITS),
  ];
}

/**
 * The four BIGINT digits, lowest first, of the integer `top`·2^186 + `high`·2^124 + `middle`·2^62
 * + `low`, each a HUGEINT expression (null counts as 0): carried from the lowest up with DuckDB's
 * shifts (which floor) and masks (two's complement), whose HUGEINT arithmetic errors on overflow.
 */
export function sumDigitsSql(parts: {
  top?: string;
  high: string;
  middle: string;
  low: string;
}): string[] {
  const h = (x: string) => `coalesce(${x}, 0)::HUGEINT`;
  const low = h(parts.low);
  const middle = `(${h(parts.middle)} + (${low} >> ${DIGIT_BITS}))`;
  const high = `(${h(parts.high)} + (${middle} >> ${DIGIT_BITS}))`;
  const top = parts.top === undefined ? '' : `${h(parts.top)} + `;
  return [
    `(${low} & ${MASK_SQL})::BIGINT`,
    `(${middle} & ${MASK_SQL})::BIGINT`,
    `(${high} & ${MASK_SQL})::BIGINT`,
    `(${top}(${high} >> ${DIGIT_BITS}))::BIGINT`,
  ];
}

/**
 * The high limb's sum (weight 2^124) of rows carrying high digits `h` and top digits `t`, added up
 * where `only` (a FILTER clause, or '') holds: the top digits fold into it, which stays within
 * HUGEINT for fewer than 2^63 rows.
 */
export function foldedHighSql(h: string, t: string, only: string): string {
  return `(coalesce(sum(${h})${only}, 0)::HUGEINT + coalesce(sum(${t})${only}, 0)::HUGEINT * ${RADIX_SQL})`;
}
