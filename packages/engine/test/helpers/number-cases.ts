import { random } from './fixture-events.ts';
import { type FixtureEvent, jsonText } from './reference.ts';

/**
 * The number rule's cases (docs/query-semantics.md): magnitudes past 2^53, 2^63 and 2^64, next to
 * the largest double, subnormals, −0, and strings with exponents, trailing zeros, underscores and
 * other numeric-looking text, as events and as filter values.
 */

export const KEY = 'number-rule-key';
export const NOW = 1_800_000_000;
export const MAX = Number.MAX_VALUE;

/** Values by group: a query reads one group or all of them, so sums stay clear of cancellation. */
export const GROUPS: Record<string, unknown[]> = {
  // The issue's own events: Sum 1.4689e20, and five of them above 1e18.
  issue: [1e20, 1e20, 3, 2 ** 64, 2 ** 64, -1e20, 1e19],
  wide: [
    2 ** 53,
    2 ** 53 + 2,
    2 ** 63,
    -(2 ** 63),
    2 ** 63 + 2 ** 11,
    2 ** 64 - 2 ** 12,
    2 ** 65,
    1e21,
    1.5e22,
    -0,
    0,
    1e-7,
  ],
  tiny: [5e-324, 2.2250738585072014e-308, 1e-310],
  texts: ['1e5', '1E5', '1.50', '100.000', '-2.5e-3', '+5', '.5', '5.', ' 7 ', '1e21', '-0'],
  words: ['1_000', '0x10', 'Infinity', 'NaN', '1e400', '1,000', '--1', '1e', 'e5', '', 'inf'],
  near: [MAX, MAX / 2, MAX / 3, 1.7e308, 1e308],
  pm: [1e308, -1e308],
  over: [MAX, MAX, -1, 1.7e308],
  // Integer tokens beyond 64 bits (a bigint is sent digit for digit, in a payload string), which
  // ClickHouse's JSON reader refuses: read as their nearest double, labelled by their digits.
  tokens: [
    12345678901234567890123n,
    -12345678901234567890123n,
    18446744073709551616n,
    18446744073709551615n,
    -9223372036854775809n,
    2n ** 64n,
    10n ** 20n,
    99999999999999999999999999999n,
  ],
  // Integer tokens next to the largest double: MAX's own digits and one that rounds to it (of
  // one sign per group, as `near`, so percentiles stay clear of overflowing interpolation).
  huge: [BigInt(MAX), 17976931348623158n * 10n ** 292n, 10n ** 308n],
  hugeneg: [-BigInt(MAX), -(10n ** 308n)],
  // Arrays (and objects in them) of numbers JavaScript writes with an exponent, and of integers
  // past 2^64 as objects and as tokens.
  arrays: [
    [1e21, 2],
    [1e-7, 5e-324, 1.5e300],
    [-1e21, 1.5e-7, 2 ** 70],
    [{ a: 1e21, b: [1e300] }, 'x1e5'],
    [[1e21], 2 ** 64],
    [12345678901234567890123n, 1e21],
    ['1e21', 'e5', 18446744073709551616n],
  ],
  // Sums that floating-point addition gets wrong in some order: cancellation, many tenths,
  // mixed magnitudes, subnormal sums, the integers past 2^53, 2^63, 2^64, and ±1.7e308 pairs
  // whose partial sums overflow while the whole does not.
  cancel: [1e20, 3, -1e20, 1e-3, -7e15, 7e15],
  tenths: Array.from({ length: 30 }, () => 0.1),
  mixed: [1e16, 1, 1, -1e16, 1e-8, 2 ** -60, 123.456, -0.5, 3.3e-5, 7e9],
  subnormal: [5e-324, 5e-324, -1e-323, 2.2250738585072014e-308, -2.225073858507201e-308, 1e-320],
  integers: [2 ** 53 + 2, 1, 2 ** 63 + 2 ** 11, -(2 ** 63), 2 ** 64 - 2 ** 11, 1, 2 ** 64, 3],
  pairs: [1.7e308, -1.7e308, 1.7e308, -1.6e308, 1, 1.7e308, -1.7e308],
};

/** A deeper path every event also holds its value at: no key columns, read from the JSON. */
export const DEEP = 'deep.a.b.c';

/**
 * Two events per value (one in `pm`, whose sum would otherwise overflow or not by the order of
 * addition), at generated seconds, with a second field to split on.
 */
export function events(): FixtureEvent[] {
  const r = random(35);
  const out: FixtureEvent[] = [];
  for (const [g, values] of Object.entries(GROUPS)) {
    for (const value of values) {
      for (let copy = 0; copy < (g === 'pm' ? 1 : 2); copy++) {
        const json = {
          g,
          nn: value,
          tag: `t${Math.floor(r() * 3)}`,
          deep: { a: { b: { c: value } } },
        };
        out.push({
          timestamp: NOW - 1 - Math.floor(r() * 5 * 86_400),
          json,
          ...(holdsToken(value) ? { text: jsonText(json) } : {}),
        });
      }
    }
  }
  return out.sort((a, b) => a.timestamp - b.timestamp);
}

/** Whether a value holds a bigint (an integer token only a payload string carries). */
function holdsToken(value: unknown): boolean {
  if (typeof value === 'bigint') return true;
  return typeof value === 'object' && value !== null && Object.values(value).some(holdsToken);
}

export const FILTER_VALUES: Array<string | number> = [
  1e18,
  2 ** 64,
  '18446744073709551616',
  1e20,
  '1e20',
  -1e20,
  0,
  '-0',
  5e-324,
  '1e5',
  1.5,
  '1_000',
  MAX,
  '12345678901234567890123',
  1.2345678901234568e22,
  '-9223372036854775809',
  '99999999999999999999999999999',
  1e21,
  '1e21',
  '[1e+21,2]',
  '1e-7',
];

export const AGGREGATIONS = ['Count', 'Sum', 'Avg', 'P50', 'P90'];

/**
 * Per group and over all of them: every line kind (or only those `kinds` names), split by the
 * value and by a tag.
 */
export function aggregationRequests(
  aggregation: string,
  field = 'nn',
  kinds?: readonly string[],
): Record<string, unknown>[] {
  const metric = aggregation === 'Count' ? {} : { metric: field };
  const bodies: Record<string, unknown>[] = [];
  for (const g of [...Object.keys(GROUPS), null]) {
    const filters = g === null ? [] : [['g', '=', g]];
    const base = { aggregation, ...metric, filters };
    bodies.push(
      { graph_type: 'Single Value', ...base },
      { graph_type: 'Table', split: field, ...base },
      { graph_type: 'Pie Chart', split: 'tag', ...base },
      { graph_type: 'Single Line', granularity: 'Day', ...base },
      { graph_type: 'Cumulative Line', granularity: 'Day', ...base },
      { graph_type: 'Multi Line', granularity: 'Day', split: 'tag', ...base },
    );
  }
  return kinds ? bodies.filter((body) => kinds.includes(body.graph_type as string)) : bodies;
}

/** Every comparison operator on numbers of every magnitude and text. */
export function filterRequests(field = 'nn'): Record<string, unknown>[] {
  return FILTER_VALUES.flatMap((value) =>
    ['=', '≠', '>', '<', 'includes', 'excludes'].map((op) => ({
      graph_type: 'Table',
      split: 'g',
      aggregation: 'Count',
      filters: [[field, op, value]],
    })),
  );
}
