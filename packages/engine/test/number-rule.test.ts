import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BEYOND_DOUBLES } from '../src/collection/plan/number-rule.ts';
import type { Engine } from '../src/index.ts';
import { DRIVER } from './helpers/driver.ts';
import { expectClose } from './helpers/expect-close.ts';
import { random } from './helpers/fixture-events.ts';
import { loggedEngine } from './helpers/logged-engine.ts';
import { type FixtureEvent, referenceAnswer } from './helpers/reference.ts';

/**
 * The number rule (docs/query-semantics.md) on generated values: magnitudes past 2^53, 2^63 and
 * 2^64, next to the largest double, subnormals, −0, and strings with exponents, trailing zeros,
 * underscores and other numeric-looking text, in filters, splits and every aggregation. Each
 * answer must be the reference's; one the reference cannot write as JSON must be the 400.
 */

const KEY = 'number-rule-key';
const NOW = 1_800_000_000;
const MAX = Number.MAX_VALUE;

/** Values by group: a query reads one group or all of them, so sums stay clear of cancellation. */
const GROUPS: Record<string, unknown[]> = {
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
};

/**
 * Two events per value (one in `pm`, whose sum would otherwise overflow or not by the order of
 * addition), at generated seconds, with a second field to split on.
 */
function events(): FixtureEvent[] {
  const r = random(35);
  const out: FixtureEvent[] = [];
  for (const [g, values] of Object.entries(GROUPS)) {
    for (const value of values) {
      for (let copy = 0; copy < (g === 'pm' ? 1 : 2); copy++) {
        out.push({
          timestamp: NOW - 1 - Math.floor(r() * 5 * 86_400),
          json: { g, nn: value, tag: `t${Math.floor(r() * 3)}` },
        });
      }
    }
  }
  return out.sort((a, b) => a.timestamp - b.timestamp);
}

const EVENTS = events();
let engine: Engine;

let logged: Awaited<ReturnType<typeof loggedEngine>> | undefined;

beforeAll(async () => {
  logged = await loggedEngine('number-rule', KEY, EVENTS, NOW);
  engine = logged.engine;
});

afterAll(() => logged?.close());

const FILTER_VALUES: Array<string | number> = [
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
];

async function check(body: Record<string, unknown>): Promise<void> {
  const request = {
    api_key: KEY,
    start: NOW - 6 * 86_400,
    end: NOW,
    IANA_time_zone: 'UTC',
    ...body,
  };
  const expected = referenceAnswer(EVENTS, request, NOW);
  const answer = await engine.query(request);
  const label = `${DRIVER} ${JSON.stringify(body)}`;
  if (!finite(expected)) {
    expect(answer, label).toMatchObject({ status: 400, body: { error: BEYOND_DOUBLES } });
    return;
  }
  if (answer.status !== 200)
    expect.fail(`${answer.status} ${JSON.stringify(answer.body)} ${label}`);
  expectClose(answer.body, expected, label);
}

/** Whether every number of an answer is finite (JSON has no other). */
function finite(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  if (typeof value === 'object' && value !== null) return Object.values(value).every(finite);
  return true;
}

describe('the number rule', () => {
  const groups = [...Object.keys(GROUPS), null];
  for (const aggregation of ['Count', 'Sum', 'Avg', 'P50', 'P90']) {
    test(`${aggregation}: per group, split by value and by tag, every line kind`, async () => {
      const metric = aggregation === 'Count' ? {} : { metric: 'nn' };
      for (const g of groups) {
        const filters = g === null ? [] : [['g', '=', g]];
        const base = { aggregation, ...metric, filters };
        await check({ graph_type: 'Single Value', ...base });
        await check({ graph_type: 'Table', split: 'nn', ...base });
        await check({ graph_type: 'Pie Chart', split: 'tag', ...base });
        await check({ graph_type: 'Single Line', granularity: 'Day', ...base });
        await check({ graph_type: 'Cumulative Line', granularity: 'Day', ...base });
        await check({ graph_type: 'Multi Line', granularity: 'Day', split: 'tag', ...base });
      }
    });
  }

  test('filters on numbers of every magnitude and text', async () => {
    for (const value of FILTER_VALUES) {
      for (const op of ['=', '≠', '>', '<', 'includes', 'excludes']) {
        await check({
          graph_type: 'Table',
          split: 'g',
          aggregation: 'Count',
          filters: [['nn', op, value]],
        });
      }
    }
  });
});
