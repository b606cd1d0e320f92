import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Envelope } from '@analytics-chart/protocol';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createEngine, type Engine } from '../src/index.ts';
import { DRIVER, driverOptions } from './helpers/driver.ts';
import { expectClose } from './helpers/expect-close.ts';
import { type FixtureEvent, referenceAnswer } from './helpers/reference.ts';

/**
 * What one event contributes to an answer depends on that event alone: paths of any depth,
 * a number's string form, and which of the paths spelling a dotted field an event's value sits
 * at. Expected answers come from the reference implementation (a loop over the events) and,
 * for numbers, from the JSON text itself.
 */

const KEY = 'field-paths-key';
/**
 * On ClickHouse the property spreads its runs over workspaces of their own: every new path is an
 * ALTER whose cost grows with the columns earlier runs added to a workspace's one table.
 */
const RUN_WORKSPACES = DRIVER === 'clickhouse' ? 10 : 0;
const runKey = (run: number) => (RUN_WORKSPACES ? `field-paths-run-${run % RUN_WORKSPACES}` : KEY);
/** The workspace the next collections and questions go to. */
let key = KEY;
const NOW = 1_800_000_000;
const TS = NOW - 3600;
let dir: string;
let engine: Engine;
let collections = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'engine-fields-'));
  engine = await createEngine({
    dataDir: dir,
    workspaces: {
      default: KEY,
      ...Object.fromEntries(
        Array.from({ length: RUN_WORKSPACES }, (_, i) => [`run${i}`, runKey(i)]),
      ),
    },
    now: () => NOW,
    // No body here is past the inline limit: no body workers.
    bodyWorkers: 0,
    ...driverOptions(),
  });
});

afterAll(async () => {
  await engine?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A new collection holding `jsons` (in requests of `batch` events, to vary the key sets). */
async function collectionOf(jsons: Array<Record<string, unknown> | string>, batch = 1000) {
  const collection = `c${collections++}`;
  for (let i = 0; i < jsons.length; i += batch) {
    const answer = await engine.bulkLog({
      api_key: key,
      collection,
      timestamp: TS,
      jsons: jsons.slice(i, i + batch),
    });
    expect(answer.status).toBe(200);
  }
  return collection;
}

async function ask(collection: string, body: Record<string, unknown>): Promise<Envelope> {
  const answer = await engine.query({
    api_key: key,
    collection,
    start: TS - 10,
    end: TS + 10,
    ...body,
  });
  if (answer.status !== 200) expect.fail(`${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body as Envelope;
}

/** The engine's answer to `body`, once checked against the reference over `events`. */
async function checkAgainstReference(
  collection: string,
  events: Array<Record<string, unknown>>,
  body: Record<string, unknown>,
): Promise<Envelope> {
  const fixture: FixtureEvent[] = events.map((json) => ({ timestamp: TS, json }));
  const request = { api_key: key, collection, start: TS - 10, end: TS + 10, ...body };
  const answer = await ask(collection, body);
  expectClose(answer, referenceAnswer(fixture, request, NOW, collection));
  return answer;
}

/** An object holding `value` at the path `k1.k2…kd`. */
function nested(depth: number, value: unknown): Record<string, unknown> {
  let json: unknown = value;
  for (let i = depth; i >= 1; i--) json = { [`k${i}`]: json };
  return json as Record<string, unknown>;
}
const pathOf = (depth: number) => Array.from({ length: depth }, (_, i) => `k${i + 1}`).join('.');

describe('paths of depth 1 to 12', () => {
  const events = Array.from({ length: 12 }, (_, i) => i + 1).flatMap((depth) => [
    { ...nested(depth, depth * 10), n: depth },
    { ...nested(depth, `v${depth}`), n: depth },
    { ...nested(depth, [depth, `e${depth}`]), n: depth },
    { ...nested(depth, { deeper: depth }), n: depth },
  ]);
  let collection: string;
  beforeAll(async () => {
    collection = await collectionOf(events);
  });

  for (let depth = 1; depth <= 12; depth++) {
    const field = pathOf(depth);
    test(`depth ${depth}: every filter operator, Sum, Avg and a Table split`, async () => {
      for (const [op, value] of [
        ['=', depth * 10],
        ['=', `v${depth}`],
        ['≠', depth * 10],
        ['>', depth * 10 - 1],
        ['<', 1000],
        ['includes', `e${depth}`],
        ['includes', 'v'],
        ['excludes', `v${depth}`],
      ]) {
        const body = { graph_type: 'Single Value', filters: [[field, op, value]] };
        const answer = await checkAgainstReference(collection, events, body);
        // A hand count for the two that matter most: the number and not the number.
        if (op === '=' && typeof value === 'number') expect(answer.result).toEqual([{ Count: 1 }]);
        if (op === '≠') expect(answer.result).toEqual([{ Count: events.length - 1 }]);
      }
      const sum = await ask(collection, {
        graph_type: 'Single Value',
        aggregation: 'Sum',
        metric: field,
      });
      expect(sum.result).toEqual([{ [`Sum(${field})`]: depth * 10 }]);
      await checkAgainstReference(collection, events, {
        graph_type: 'Table',
        split: field,
        aggregation: 'Avg',
        metric: 'n',
      });
    });
  }
});

describe("a number's string form is its JSON text", () => {
  const numbers = [1e15, 1e16, 1e21, 1.5e21, 1e-7, 1.5e-7, 0.000001, 123.456, 2 ** 53, -42, 0.1];
  const events = numbers.map((x, i) => ({ x, i }));

  async function labels(collection: string) {
    const table = await ask(collection, {
      graph_type: 'Table',
      split: 'x',
      aggregation: 'Sum',
      metric: 'i',
    });
    const byIndex = new Map(
      (table.result as Array<Record<string, string | number>>).map((row) => [row['Sum(i)'], row.x]),
    );
    return numbers.map((_, i) => byIndex.get(i));
  }

  test('in a split, whether or not the key ever held a string', async () => {
    const numbersOnly = await collectionOf(events);
    const withString = await collectionOf([...events, { x: 'word', i: 100 }]);
    const expected = numbers.map((x) => JSON.stringify(x));
    expect(await labels(numbersOnly)).toEqual(expected);
    expect(await labels(withString)).toEqual(expected);
  });

  test('in includes, whether or not the key ever held a string', async () => {
    const numbersOnly = await collectionOf(events);
    const withString = await collectionOf([...events, { x: 'word', i: 100 }]);
    for (const collection of [numbersOnly, withString]) {
      for (const [text, count] of [
        ['1e-7', 1],
        ['e+21', 2],
        ['0000000000000000', 1],
        ['000000000000000', 2],
        ['000.0', 0],
      ] as const) {
        const answer = await ask(collection, {
          graph_type: 'Single Value',
          filters: [['x', 'includes', text]],
        });
        expect(answer.result, `${collection} includes ${text}`).toEqual([{ Count: count }]);
      }
    }
  });

  test('a payload sent as text keeps its integers digit for digit', async () => {
    const collection = await collectionOf(['{"x":12345678901234567890,"i":0}']);
    const table = await ask(collection, { graph_type: 'Table', split: 'x' });
    expect(table.result).toEqual([{ x: '12345678901234567890', Count: 1 }]);
  });
});

describe('a literal dotted key and a nested path, decided per event', () => {
  test('the example: Sum(m.v) over both shapes', async () => {
    const events = [{ 'm.v': 100 }, { m: { v: 9.5 } }, { 'm.v': null, m: { v: 1 } }];
    const collection = await collectionOf(events);
    const sum = await ask(collection, {
      graph_type: 'Single Value',
      aggregation: 'Sum',
      metric: 'm.v',
    });
    expect(sum.result).toEqual([{ 'Sum(m.v)': 110.5 }]);
  });

  const KEYS = ['a', 'b', 'a.b', 'b.c', 'a.b.c'];
  const FIELDS = ['a', 'a.b', 'a.b.c', 'b.c', 'b'];
  const leaf = fc.oneof(
    fc.integer({ min: -5, max: 5 }),
    fc.constantFrom('x', 'y', '3', '1e-7'),
    fc.constant(null),
    fc.boolean(),
    fc.constant([1, 'x']),
  );
  const eventArb: fc.Arbitrary<Record<string, unknown>> = fc.letrec((tie) => ({
    object: fc.dictionary(
      fc.constantFrom(...KEYS),
      fc.oneof({ depthSize: 'small' }, leaf, tie('object')),
      {
        maxKeys: 3,
      },
    ),
  })).object as fc.Arbitrary<Record<string, unknown>>;

  test('adding an event never changes what the other events contribute', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(eventArb, { minLength: 1, maxLength: 6 }),
        eventArb,
        fc.constantFrom(...FIELDS),
        fc.constantFrom(1, 2),
        async (others, added, field, batch) => {
          key = runKey(run++);
          const without = await collectionOf(others, batch);
          const withIt = await collectionOf([...others, added], batch);
          const alone = await collectionOf([added]);
          const body = { graph_type: 'Table', split: field, aggregation: 'Sum', metric: field };
          const byName = (e: Envelope) =>
            Object.fromEntries(
              (e.result as Array<Record<string, string | number>>).map((row) => [
                row[field],
                row[`Sum(${field})`],
              ]),
            );
          const a = byName(await ask(without, body));
          const b = byName(await ask(withIt, body));
          const c = byName(await ask(alone, body));
          // Each split value's sum with the event is its sum without it plus the event's own.
          for (const name of new Set([...Object.keys(a), ...Object.keys(c)])) {
            expect(b[name]).toBeCloseTo(Number(a[name] ?? 0) + Number(c[name] ?? 0), 9);
          }
          await checkAgainstReference(withIt, [...others, added], body);
          await checkAgainstReference(withIt, [...others, added], {
            graph_type: 'Single Value',
            filters: [[field, '≠', 'x']],
          });
        },
      ),
      // Fewer runs on ClickHouse, where every new path costs an ALTER.
      { numRuns: DRIVER === 'clickhouse' ? 20 : 60, seed: 22 },
    );
    key = KEY;
  }, 300_000);
});
