import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BEYOND_DOUBLES } from '../src/collection/plan/number-rule.ts';
import type { Engine } from '../src/index.ts';
import { DRIVER } from './helpers/driver.ts';
import { type DuckDbTwin, duckdbTwin } from './helpers/duckdb-twin.ts';
import { expectClose } from './helpers/expect-close.ts';
import { loggedEngine } from './helpers/logged-engine.ts';
import {
  AGGREGATIONS,
  aggregationRequests,
  DEEP,
  events,
  filterRequests,
  KEY,
  NOW,
} from './helpers/number-cases.ts';
import { referenceAnswer } from './helpers/reference.ts';

/**
 * The number rule (docs/query-semantics.md) on generated values: magnitudes past 2^53, 2^63 and
 * 2^64, next to the largest double, subnormals, −0, and strings with exponents, trailing zeros,
 * underscores and other numeric-looking text, in filters, splits and every aggregation. Each
 * answer must be the reference's; one the reference cannot write as JSON must be the 400. On
 * ClickHouse each answer must also be DuckDB's, byte for byte (`helpers/duckdb-twin.ts`).
 */

const EVENTS = events();
const DEEP_KINDS = ['Single Value', 'Table', 'Multi Line'];
let engine: Engine;

let logged: Awaited<ReturnType<typeof loggedEngine>> | undefined;
let twin: DuckDbTwin | undefined;

beforeAll(async () => {
  [logged, twin] = await Promise.all([
    loggedEngine('number-rule', KEY, EVENTS, NOW),
    duckdbTwin('number-rule', KEY, EVENTS, NOW),
  ]);
  engine = logged.engine;
}, 120_000);

afterAll(async () => {
  await logged?.close();
  await twin?.close();
});

/** Bodies checked already: Count at the deep path repeats Count's bodies but for its split. */
const checked = new Set<string>();

async function check(body: Record<string, unknown>): Promise<void> {
  const text = JSON.stringify(body);
  if (checked.has(text)) return;
  checked.add(text);
  const request = {
    api_key: KEY,
    start: NOW - 6 * 86_400,
    end: NOW,
    IANA_time_zone: 'UTC',
    ...body,
  };
  const expected = referenceAnswer(EVENTS, request, NOW);
  const answer = await engine.query(request);
  await twin?.expectSame(request, answer);
  const label = `${DRIVER} ${text}`;
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
  for (const aggregation of AGGREGATIONS) {
    test(`${aggregation}: per group, split by value and by tag, every line kind`, async () => {
      for (const body of aggregationRequests(aggregation)) await check(body);
    });
  }

  test('filters on numbers of every magnitude and text', async () => {
    for (const body of filterRequests()) await check(body);
  });

  // A path without key columns on ClickHouse: read from the payload, which may hold a token
  // ClickHouse's JSON reader refuses. The line kinds that read the value, split by it and bucket it
  // by time: the others add nothing the value's source changes.
  // One test per aggregation, as each reads the payload on every query.
  for (const aggregation of AGGREGATIONS) {
    test(`${aggregation} at ${DEEP}`, async () => {
      for (const body of aggregationRequests(aggregation, DEEP, DEEP_KINDS)) await check(body);
    }, 120_000);
  }

  test(`filters at ${DEEP}`, async () => {
    for (const body of filterRequests(DEEP)) await check(body);
  }, 120_000);
});
