import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { MAX_SPLIT_CELLS } from '../../src/collection/plan/split-series.ts';
import { createEngine, type Engine } from '../../src/index.ts';
import { driverOptions } from '../helpers/driver.ts';
import { referenceAnswer } from '../helpers/reference.ts';

/**
 * Splits over more (series, bucket) cells than the engine ranks itself (MAX_SPLIT_CELLS), where
 * each driver ranks in SQL: a Sum, Avg, Count or percentile must still be the exact rule's
 * values, the same text on both drivers, and the reference's. And capped selections (the top 10 series, a Pie's 10 or a Bar's
 * 50 slices) among series whose exact Sums and Avgs tie, or differ in their last bits, while
 * floating-point sums of their values tie otherwise: each driver picks the reference's series,
 * ranking them itself or, past MAX_SPLIT_CELLS, in SQL with ties at the 10th series.
 */

const NOW = 1_800_000_000;
const KEY = 'ranked-splits-key';
const dir = mkdtempSync(join(tmpdir(), 'engine-ranked-splits-'));
const engines: Engine[] = [];
// 250 split values in 60 minutes: up to 15,000 cells; values that floating-point sums get wrong.
const events = Array.from({ length: 16_000 }, (_, i) => ({
  timestamp: NOW - 3600 + 60 * (i % 60) + 1,
  json: { s: `v${(i * 7) % 250}`, x: [0.1, 1e16, -1e16, 3, 2 ** -60, 123.456][i % 6] as number },
}));

/**
 * The `ties` collection: 70 series of five values each, one event per value. A series holds c,
 * a pair ±B of a size that a floating-point sum loses c beside (2^60 and more), and zeros or
 * values that tie exactly in other orders (0.1, 0.2, 0.3), in a seeded order: their exact Sums
 * and Avgs are c, c/5 or 0.6 and 0.12, ties among many series, while a double summed in any
 * order reads 0, c or 0.6000000000000001.
 */
function tieEvents(): Array<{ timestamp: number; json: { s: string; x: number } }> {
  let seed = 7;
  const next = (n: number) => {
    seed = (seed * 48_271) % 2_147_483_647;
    return seed % n;
  };
  const out: Array<{ timestamp: number; json: { s: string; x: number } }> = [];
  for (let i = 0; i < 70; i++) {
    const c = [1, 2, 3, 0.6][next(4)] as number;
    const big = [2 ** 60, 1e20, 2 ** 70, 0][next(4)] as number;
    const values = c === 0.6 ? [0.1, 0.2, 0.3, big, -big] : [c, big, -big, 0, big === 0 ? 0 : -0];
    // A seeded order of the five values: each driver sums them in its own order.
    for (let j = values.length - 1; j > 0; j--) {
      const k = next(j + 1);
      [values[j], values[k]] = [values[k] as number, values[j] as number];
    }
    // Names in an order unrelated to the values, so that ties are broken by name.
    const name = `t${String((i * 37) % 70).padStart(2, '0')}`;
    values.forEach((x, j) => {
      out.push({ timestamp: NOW - 3000 + 600 * (j % 4) + i, json: { s: name, x } });
    });
  }
  return out;
}

const ties = tieEvents();

/**
 * The `boundary` collection: a split line of MAX_SPLIT_CELLS + 1 cells (one event each, in two
 * hours), ranked in SQL, whose 10th series ties with two after it while SQL's ranking keys
 * cannot tell these from series of 0. Six series hold integers (9, 8, 8, 7, 7, 7); b0 to b5 hold 2^-1073 each, as one
 * subnormal or a sum of two (2^-1074 + 2^-1074, 3·2^-1074 − 2^-1074), so the top 10 end with
 * b0 to b3 and the ties b4 and b5 are cut by name; a0 to a3 hold 0 and the fillers −1. A
 * subnormal scaled by 2^-64 is 0, so every a and b series has the key 0 and a0 to a3 come first
 * by name among them: only the rule's upper bounds reaching the 10th lower bound keep b0 to b3.
 */
function boundaryEvents(): Array<{ timestamp: number; json: { s: string; x: number } }> {
  const [a, b] = [NOW - 5400, NOW - 1800];
  const tiny = 2 ** -1074;
  const series: Record<string, Array<[number, number]>> = {
    c1: [
      [a, 4],
      [b, 5],
    ],
    c2: [[a, 8]],
    c3: [
      [a, 3],
      [b, 5],
    ],
    c4: [[b, 7]],
    c5: [[a, 7]],
    c6: [
      [a, 1],
      [b, 6],
    ],
    b0: [
      [a, tiny],
      [b, tiny],
    ],
    b1: [[a, 2 * tiny]],
    b2: [
      [b, tiny],
      [a, tiny],
    ],
    b3: [
      [a, 3 * tiny],
      [b, -tiny],
    ],
    b4: [[b, 2 * tiny]],
    b5: [[a, 2 * tiny]],
    a0: [[a, 0]],
    a1: [[a, 0]],
    a2: [[b, 0]],
    a3: [[a, 0]],
  };
  const out = Object.entries(series).flatMap(([s, cells]) =>
    cells.map(([timestamp, x]) => ({ timestamp, json: { s, x } })),
  );
  for (let i = out.length; i <= MAX_SPLIT_CELLS; i++) {
    out.push({ timestamp: a, json: { s: `f${String(i).padStart(5, '0')}`, x: -1 } });
  }
  return out;
}

const boundary = boundaryEvents();

beforeAll(async () => {
  const workspaces = { default: KEY };
  engines.push(
    await createEngine({ dataDir: join(dir, 'duckdb'), workspaces, now: () => NOW }),
    await createEngine({
      dataDir: join(dir, 'ch'),
      workspaces,
      now: () => NOW,
      ...driverOptions(),
    }),
  );
  for (const engine of engines) {
    // One bulk per minute: its events share their second.
    for (let minute = 0; minute < 60; minute++) {
      const timestamp = NOW - 3600 + 60 * minute + 1;
      const jsons = events
        .filter((e) => e.timestamp === timestamp)
        .map((e) => JSON.stringify(e.json));
      const answer = await engine.bulkLog({ api_key: KEY, timestamp, jsons });
      expect(answer.status).toBe(200);
    }
    // At once, as concurrent clients send them: the group commit writes them in a few inserts.
    const answers = await Promise.all(
      ties.map((e) => engine.log({ api_key: KEY, collection: 'ties', ...e })),
    );
    for (const answer of answers) expect(answer.status).toBe(200);
    // One bulk per hour (a bulk holds one timestamp and at most 10,000 events).
    for (const timestamp of new Set(boundary.map((e) => e.timestamp))) {
      const jsons = boundary
        .filter((e) => e.timestamp === timestamp)
        .map((e) => JSON.stringify(e.json));
      const body = { api_key: KEY, collection: 'boundary', timestamp, jsons };
      expect((await engine.bulkLog(body)).status).toBe(200);
    }
  }
}, 300_000);

afterAll(async () => {
  await Promise.all(engines.map((e) => e.close()));
  rmSync(dir, { recursive: true, force: true });
});

test.each(['Sum', 'Avg', 'Count', 'P90'])(
  '%s over more cells than the engine ranks',
  async (aggregation) => {
    const body = {
      api_key: KEY,
      graph_type: 'Multi Line',
      granularity: 'Minute',
      split: 's',
      aggregation,
      metric: 'x',
      start: NOW - 3700,
      end: NOW,
      IANA_time_zone: 'UTC',
    };
    const [duckdb, clickhouse] = await Promise.all(engines.map((e) => e.query(body)));
    expect(duckdb?.status).toBe(200);
    expect(JSON.stringify(clickhouse?.body)).toBe(JSON.stringify(duckdb?.body));
    expect(duckdb?.body).toEqual(referenceAnswer(events, body, NOW));
  },
  120_000,
);

test.each(
  ['Sum', 'Avg'].flatMap((aggregation) =>
    ['Multi Line', 'Stacked Line', 'Pie Chart', 'Bar Chart', 'Table'].map(
      (graph_type) => [aggregation, graph_type] as const,
    ),
  ),
)(
  '%s ties: %s picks the reference series on both drivers',
  async (aggregation, graph_type) => {
    const body = {
      api_key: KEY,
      collection: 'ties',
      graph_type,
      granularity: 'Hour',
      split: 's',
      aggregation,
      metric: 'x',
      start: NOW - 3600,
      end: NOW,
      IANA_time_zone: 'UTC',
    };
    const [duckdb, clickhouse] = await Promise.all(engines.map((e) => e.query(body)));
    expect(duckdb?.status).toBe(200);
    const reference = referenceAnswer(ties, body, NOW, 'ties');
    expect(duckdb?.body).toEqual(reference);
    expect(clickhouse?.body).toEqual(reference);
  },
  120_000,
);

test('Sum ranked in SQL keeps the series tied with the 10th, and cuts those after it by name', async () => {
  // Every event is a cell of its own: one more than the engine ranks itself.
  expect(new Set(boundary.map((e) => `${e.json.s} ${e.timestamp}`)).size).toBe(MAX_SPLIT_CELLS + 1);
  const body = {
    api_key: KEY,
    collection: 'boundary',
    graph_type: 'Multi Line',
    granularity: 'Hour',
    split: 's',
    aggregation: 'Sum',
    metric: 'x',
    start: NOW - 7200,
    end: NOW,
    IANA_time_zone: 'UTC',
  };
  const reference = referenceAnswer(boundary, body, NOW, 'boundary');
  expect(reference.metadata.series).toEqual([
    'c1',
    'c2',
    'c3',
    'c4',
    'c5',
    'c6',
    'b0',
    'b1',
    'b2',
    'b3',
  ]);
  const [duckdb, clickhouse] = await Promise.all(engines.map((e) => e.query(body)));
  expect(duckdb?.body).toEqual(reference);
  expect(clickhouse?.body).toEqual(reference);
});
