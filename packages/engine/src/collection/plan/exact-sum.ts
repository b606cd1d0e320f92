import type { Aggregation } from '@analytics-chart/protocol';

/**
 * Sum and Avg as the number rule defines them (docs/query-semantics.md): the exact sum of the
 * values, rounded once to the nearest double, and the exact sum divided by the count, rounded
 * once. Floating-point addition depends on its order (threads, drivers), so the drivers add
 * integers instead and this module, the same for both, does the one rounding.
 *
 * Each driver's SQL splits a value x whose |x|·2^{@link FRACTION_BITS} is an integer (and |x|
 * below 2^96) into three 62-bit limbs of that fixed-point integer (signed by x, so each fits a
 * 64-bit integer), summed as 128-bit integers; a value off that grid (bits below 2^-90, or
 * beyond 2^96) travels as itself in `rest`.
 */

/** Fraction bits of the fixed-point grid the drivers' limbs share. */
export const FRACTION_BITS = 90;

/** One group's exact sum as a driver returns it. */
export interface SumParts {
  /** Sums of the limbs of |x|·2^90 (weights 2^124, 2^62, 1), each signed by its value. */
  limbs: readonly [bigint, bigint, bigint];
  /** The values off the grid, each exact. */
  rest: readonly number[];
  /** How many values were summed. */
  count: number;
  /** Values summed already as one integer times 2^-1074 (a driver that adds significands by exponent). */
  scaled?: bigint;
}

/**
 * Fraction bits of a driver's sum of whole values (`w`, with the smallest magnitude `q`, in
 * {@link readSumParts}): values of magnitude 2^(52 - 62) or more are whole multiples of 2^-62.
 */
export const WHOLE_FRACTION_BITS = 62;

/**
 * A sum of whole values whose smallest magnitude has bits below the integer's last: the driver's
 * casts may have rounded some, so the statement is read again with the sum's limbs.
 */
export class WholeSumRefused extends Error {
  constructor() {
    super('a value has bits below 2^-62: sum it by its limbs');
  }
}

/** Sums below 2^-1074 are fractions of a double's last bit: the common denominator's exponent. */
const DENOMINATOR_BITS = 1074;

/** A finite double as an integer times 2^-1074 (exact). */
function scaledInteger(x: number): bigint {
  if (x === 0) return 0n;
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const exponent = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & 0xfffffffffffffn;
  // Subnormals have no implicit bit and the exponent of the smallest normals.
  const mantissa = exponent === 0 ? fraction : fraction | (1n << 52n);
  const shift = BigInt(Math.max(exponent, 1) - 1);
  const magnitude = mantissa << shift;
  return x < 0 ? -magnitude : magnitude;
}

function bitLength(n: bigint): number {
  if (n === 0n) return 0;
  // Hexadecimal digits are four bits each: the leading digit says how many of its four count.
  const hex = n.toString(16);
  return (hex.length - 1) * 4 + Number.parseInt(hex[0] as string, 16).toString(2).length;
}

/** The double nearest to n·2^-scale (ties to even); ±Infinity beyond the doubles. */
export function roundScaled(n: bigint, scale: number): number {
  if (n === 0n) return 0;
  const negative = n < 0n;
  const magnitude = negative ? -n : n;
  // Keep 53 significant bits, but none below 2^-1074 (the subnormals' last bit).
  const shift = Math.max(bitLength(magnitude) - 53, scale - DENOMINATOR_BITS);
  if (shift <= 0) {
    // Every bit fits a double: exact, and 2^-scale is at least 2^-1074 here.
    const value = Number(magnitude) * 2 ** -scale;
    return negative ? -value : value;
  }
  const s = BigInt(shift);
  let q = magnitude >> s;
  const remainder = magnitude - (q << s);
  const half = 1n << (s - 1n);
  if (remainder > half || (remainder === half && (q & 1n) === 1n)) q += 1n;
  // q has at most 53 bits and the power of two is at least 2^-1074: the product is exact
  // unless it overflows, which rounds to infinity as it should.
  const value = Number(q) * 2 ** (shift - scale);
  return negative ? -value : value;
}

/** The double nearest to num / (den·2^scale), den > 0, rounded once. */
function roundQuotient(num: bigint, den: bigint, scale: number): number {
  if (num === 0n) return 0;
  const negative = num < 0n;
  const magnitude = negative ? -num : num;
  // Enough quotient bits that a sticky bit sits below any rounding position.
  const extra = Math.max(0, 56 + bitLength(den) - bitLength(magnitude));
  const shifted = magnitude << BigInt(extra);
  const q = shifted / den;
  const sticky = shifted % den === 0n ? 0n : 1n;
  const value = roundScaled((q << 1n) | sticky, scale + extra + 1);
  return negative ? -value : value;
}

/** Accumulates exact sums (from the drivers' parts or single values) and rounds once. */
export class ExactSum {
  /**
   * The grid values' sum as an integer times 2^-90, kept apart from the rest so that adding a
   * group's limbs stays an addition of small integers.
   */
  private grid = 0n;
  /** The off-grid values' sum as an integer times 2^-1074. */
  private rest = 0n;
  /** How many values the sum holds. */
  count = 0;

  /** Adds a driver's parts of one group. */
  addParts(parts: SumParts): this {
    const [high, middle, low] = parts.limbs;
    this.grid += (high << 124n) + (middle << 62n) + low;
    for (const x of parts.rest) this.rest += scaledInteger(x);
    // A driver's own scaled integer (ClickHouse's significands), already times 2^-1074.
    this.rest += parts.scaled ?? 0n;
    this.count += parts.count;
    return this;
  }

  /** Adds another accumulator's values. */
  addSum(other: ExactSum): this {
    this.grid += other.grid;
    this.rest += other.rest;
    this.count += other.count;
    return this;
  }

  /** The sum so far as an integer times 2^-1074. */
  private get total(): bigint {
    return (this.grid << BigInt(DENOMINATOR_BITS - FRACTION_BITS)) + this.rest;
  }

  /** The exact sum rounded once: ±Infinity beyond the doubles (the rule's 400), 0 for none. */
  sum(): number {
    return roundScaled(this.total, DENOMINATOR_BITS);
  }

  /** The exact sum over the count rounded once; null for no values. Never overflows. */
  mean(): number | null {
    if (this.count === 0) return null;
    return roundQuotient(this.total, BigInt(this.count), DENOMINATOR_BITS);
  }
}

/** The exact sum of parts, rounded once. */
export function sumOfParts(...parts: SumParts[]): ExactSum {
  const sum = new ExactSum();
  for (const p of parts) sum.addParts(p);
  return sum;
}

/**
 * The parts as a statement's row carries them, a record of the limb sums `h`, `m` and `l`, the
 * values off the grid `r`, the count `n` and, where a driver gives it, the scaled integer `s`
 * (null or missing: no values); or of a sum of whole values, `n`, `q` and `w` (see
 * {@link WHOLE_FRACTION_BITS}), which throws {@link WholeSumRefused} where `q` is too small.
 */
export function readSumParts(value: unknown): SumParts {
  const row = (value ?? {}) as {
    h?: unknown;
    m?: unknown;
    l?: unknown;
    r?: unknown;
    n?: unknown;
    s?: unknown;
    q?: unknown;
    w?: unknown;
  };
  const big = (v: unknown) => (typeof v === 'bigint' ? v : 0n);
  if ('w' in row) {
    // One integer times 2^-62: exact only where no value has bits below it.
    if (typeof row.q === 'number' && row.q < 2 ** (52 - WHOLE_FRACTION_BITS)) {
      throw new WholeSumRefused();
    }
    return {
      limbs: [0n, 0n, 0n],
      rest: [],
      count: Number(row.n ?? 0),
      scaled: big(row.w) << BigInt(DENOMINATOR_BITS - WHOLE_FRACTION_BITS),
    };
  }
  return {
    limbs: [big(row.h), big(row.m), big(row.l)],
    rest: Array.isArray(row.r) ? row.r.map(Number) : [],
    count: Number(row.n ?? 0),
    ...(typeof row.s === 'bigint' ? { scaled: row.s } : {}),
  };
}

/**
 * An aggregate's value from its column: Sum and Avg from their parts ({@link readSumParts}),
 * rounded once; the others as the number they are.
 */
export function readAggregate(aggregation: Aggregation, value: unknown): number | null {
  if (aggregation === 'Sum' || aggregation === 'Avg') {
    if (value === null || value === undefined) return aggregation === 'Sum' ? 0 : null;
    const sum = new ExactSum().addParts(readSumParts(value));
    return aggregation === 'Sum' ? sum.sum() : sum.mean();
  }
  if (value === null || value === undefined) return null;
  return Number(value);
}
